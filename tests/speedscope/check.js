#!/usr/bin/env node
// check.js: reads jheap --speedscope output the way tests/t0350-speedscope.sh
// needs it.  Node modules come from NODE_PATH (build/npm/speedscope/node_modules).
//
//   check.js validate FILE...  validate each FILE against the file-format
//                            schema shipped in the speedscope npm package,
//                            plus the rules the schema cannot say (frame
//                            indices in range, samples.length ==
//                            weights.length, weights > 0, endValue == sum of
//                            weights, no frame twice).  For each FILE, writes
//                            FILE.summary, one line per profile:
//                            "NAME<TAB>UNIT<TAB>SUM<TAB>NSAMPLES", and
//                            FILE.rows.N, profile N as "check.js rows" prints
//                            it; or, when FILE is wrong, only FILE.errors.
//                            With one FILE, also prints its summary.
//   check.js rows FILE N     profile N as a --text report would show it:
//                            "FLAT - - CUM - NAME" per frame name (flat to
//                            the leaf, cum once per sample; values
//                            truncated, percentages left out), by name
//   check.js frames FILE     "NAME<TAB>FILE<TAB>LINE" per frame
//   check.js names FILE N    every frame name used by profile N, one a line
// Exit status: 0 fine, 1 a file is wrong (messages on stderr), 2 usage.
// One process checks many files: starting node and compiling the schema
// is most of the time.
'use strict';
const fs = require('fs');
const path = require('path');

const [cmd, ...args] = process.argv.slice(2);
if (!cmd || !args.length) {
	process.stderr.write('usage: check.js validate FILE... | rows|frames|names FILE [N]\n');
	process.exit(2);
}

function load(file) {
	return JSON.parse(fs.readFileSync(file, 'utf8'));
}

let validator;
function schemaValidator() {
	if (!validator) {
		const Ajv = require('ajv');
		const pkg = require.resolve('speedscope/package.json');
		const file = path.join(path.dirname(pkg), 'dist', 'release', 'file-format-schema.json');
		const ajv = new Ajv({ strict: false, allErrors: true });
		validator = ajv.compile(JSON.parse(fs.readFileSync(file, 'utf8')));
	}
	return validator;
}

// The errors in DOC (an empty list when it is right) and its summary lines.
function check(doc) {
	const errs = [], summary = [];
	const validate = schemaValidator();
	if (!validate(doc))
		return { errs: ['schema errors: ' + JSON.stringify(validate.errors, null, 1)], summary };
	const nframes = doc.shared.frames.length;
	if (doc.activeProfileIndex !== 0)
		errs.push('activeProfileIndex is not 0');
	if (!doc.profiles.length)
		errs.push('no profiles');
	for (const p of doc.profiles) {
		if (p.type !== 'sampled')
			errs.push(`${p.name}: not a sampled profile`);
		if (p.samples.length !== p.weights.length)
			errs.push(`${p.name}: ${p.samples.length} samples, ${p.weights.length} weights`);
		let sum = 0;
		p.samples.forEach((s, i) => {
			for (const f of s)
				if (!Number.isInteger(f) || f < 0 || f >= nframes)
					errs.push(`${p.name}: sample ${i}: bad frame index ${f}`);
		});
		p.weights.forEach((w, i) => {
			if (!(w > 0))
				errs.push(`${p.name}: weight ${i} is ${w}`);
			sum += w;
		});
		if (p.startValue !== 0)
			errs.push(`${p.name}: startValue ${p.startValue}`);
		if (Math.abs(p.endValue - sum) > 1e-6 * Math.max(1, sum))
			errs.push(`${p.name}: endValue ${p.endValue}, weights add up to ${sum}`);
		summary.push(`${p.name}\t${p.unit}\t${Math.trunc(p.endValue)}\t${p.samples.length}\n`);
	}
	const seen = new Set();
	for (const f of doc.shared.frames) {
		const k = JSON.stringify([f.name, f.file, f.line]);
		if (seen.has(k))
			errs.push(`frame ${k} appears twice`);
		seen.add(k);
	}
	return { errs, summary };
}

// Flat and cum per frame name of profile P, as jheap's aggregate computes
// them: flat to the leaf (last), cum once per sample.
function rowsText(doc, p) {
	const flat = new Map(), cum = new Map();
	const add = (m, k, v) => m.set(k, (m.get(k) || 0) + v);
	p.samples.forEach((s, i) => {
		const w = p.weights[i];
		const names = s.map((f) => doc.shared.frames[f].name);
		if (names.length)
			add(flat, names[names.length - 1], w);
		for (const name of new Set(names))
			add(cum, name, w);
	});
	const keys = [...cum.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
	return keys.map((k) => `${Math.trunc(flat.get(k) || 0)} - - ${Math.trunc(cum.get(k))} - ${k}\n`).join('');
}

function profile(doc, n) {
	const p = doc.profiles[Number(n)];
	if (!p) {
		process.stderr.write(`no profile ${n}\n`);
		process.exit(1);
	}
	return p;
}

let bad = false;
switch (cmd) {
case 'validate':
	for (const file of args) {
		for (const old of fs.readdirSync(path.dirname(file) || '.'))
			if (old.startsWith(path.basename(file) + '.'))
				fs.unlinkSync(path.join(path.dirname(file), old));
		let doc, r;
		try {
			doc = load(file);
			r = check(doc);
		} catch (e) {
			r = { errs: [`not JSON: ${e.message}`], summary: [] };
		}
		if (r.errs.length) {
			fs.writeFileSync(`${file}.errors`, r.errs.join('\n') + '\n');
			process.stderr.write(`${file}:\n${r.errs.join('\n')}\n`);
			bad = true;
			continue;
		}
		fs.writeFileSync(`${file}.summary`, r.summary.join(''));
		doc.profiles.forEach((p, i) => fs.writeFileSync(`${file}.rows.${i}`, rowsText(doc, p)));
		if (args.length === 1)
			process.stdout.write(r.summary.join(''));
	}
	break;
case 'rows':
	process.stdout.write(rowsText(...((d) => [d, profile(d, args[1])])(load(args[0]))));
	break;
case 'frames':
	for (const f of load(args[0]).shared.frames)
		console.log(`${f.name}\t${f.file === undefined ? '' : f.file}\t${f.line === undefined ? '' : f.line}`);
	break;
case 'names': {
	const doc = load(args[0]);
	const used = new Set();
	for (const s of profile(doc, args[1]).samples)
		for (const f of s)
			used.add(doc.shared.frames[f].name);
	for (const name of [...used].sort())
		console.log(name);
	break;
}
default:
	process.stderr.write(`check.js: unknown command ${cmd}\n`);
	process.exit(2);
}
process.exit(bad ? 1 : 0);
