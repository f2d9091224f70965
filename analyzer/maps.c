#include <ctype.h>
#include <string.h>

#include "analyzer/maps.h"
#include "lib/chars.h"
#include "lib/errors.h"

/* Reads hex digits at *p; at most 16 significant ones fit. */
static int read_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;
	while (s < end && jh_hexval(*s) >= 0) {
		if (v >> 60)
			return -1;
		v = v << 4 | (uint64_t)jh_hexval(*s);
		s++;
		n++;
	}
	if (!n)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_spaces(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *skip_word(const char *s, const char *end)
{
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	return s;
}

int maps_parse_line(const char *line, size_t len, struct maps_line *out,
		    char *err, size_t errlen)
{
	const char *s = line, *end = line + len;
	memset(out, 0, sizeof(*out));
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	s = skip_spaces(s, end);
	if (read_hex(&s, end, &out->start) || s >= end || *s != '-')
		return jh_err(err, errlen, JH_EFORMAT,
			      "expected a maps line 'start-end perms offset dev inode path'");
	s++;
	if (read_hex(&s, end, &out->end) || out->end < out->start)
		return jh_err(err, errlen, JH_EFORMAT, "expected the end address of a mapping");
	if (s < end && *s == ':') {
		/* cooked form: every listed image is code */
		s = skip_spaces(s + 1, end);
		out->exec = true;
		out->path = s;
		out->pathlen = (size_t)(end - s);
		return 0;
	}
	s = skip_spaces(s, end);
	const char *perms = s;
	s = skip_word(s, end);
	if (s - perms != 4)
		return jh_err(err, errlen, JH_EFORMAT, "expected permissions like 'r-xp' in a maps line");
	out->exec = perms[2] == 'x';
	s = skip_spaces(s, end);
	if (read_hex(&s, end, &out->offset))
		return jh_err(err, errlen, JH_EFORMAT, "expected a hex file offset in a maps line");
	s = skip_spaces(s, end);
	const char *dev = s;
	s = skip_word(s, end);
	if (s == dev || !memchr(dev, ':', (size_t)(s - dev)))
		return jh_err(err, errlen, JH_EFORMAT, "expected a device 'major:minor' in a maps line");
	s = skip_spaces(s, end);
	const char *ino = s;
	while (s < end && *s >= '0' && *s <= '9')
		s++;
	if (s == ino || (s < end && *s != ' ' && *s != '\t'))
		return jh_err(err, errlen, JH_EFORMAT, "expected an inode number in a maps line");
	s = skip_spaces(s, end);
	out->path = s;
	out->pathlen = (size_t)(end - s);
	static const char del[] = " (deleted)";
	if (out->pathlen > sizeof(del) - 1 &&
	    !memcmp(end - (sizeof(del) - 1), del, sizeof(del) - 1)) {
		out->deleted = true;
		out->pathlen -= sizeof(del) - 1;
	}
	return 0;
}

bool maps_var(struct maps_vars *vars, const char *line, size_t len)
{
	size_t k = 0;
	while (k < len && (isalnum((unsigned char)line[k]) || line[k] == '_'))
		k++;
	size_t eq = k;
	while (eq < len && (line[eq] == ' ' || line[eq] == '\t'))
		eq++;
	if (!k || eq >= len || line[eq] != '=')
		return false;
	const char *val = line + eq + 1, *end = line + len;
	val = skip_spaces(val, end);
	if (vars->n < MAPS_MAX_VARS)
		vars->v[vars->n++] = (struct maps_var){ line, val, k, (size_t)(end - val) };
	return true;
}

size_t maps_expand(const struct maps_vars *vars, const char *line, size_t len, char *buf)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		int hit = -1;
		if (line[i] == '$')
			for (int k = 0; k < vars->n && hit < 0; k++)
				if (len - i - 1 >= vars->v[k].nlen &&
				    !memcmp(line + i + 1, vars->v[k].name, vars->v[k].nlen))
					hit = k;
		const char *add = hit < 0 ? line + i : vars->v[hit].value;
		size_t alen = hit < 0 ? 1 : vars->v[hit].vlen;
		if (n + alen > MAPS_MAX_LINE)
			return SIZE_MAX;
		memcpy(buf + n, add, alen);
		n += alen;
		i += hit < 0 ? 1 : 1 + vars->v[hit].nlen;
	}
	return n;
}
