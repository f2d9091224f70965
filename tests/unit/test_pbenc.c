/* The protobuf encoder, and lib/varint.h both ways.  Every expected byte string is worked out by hand
 * from the wire-format rules (protobuf.dev "Encoding"): key = field << 3 |
 * wire type, varints low 7 bits first with the high bit as "more", LEN
 * fields as key, varint length, bytes.  The first examples are the
 * encoding guide's own (150 -> 96 01, "testing", the nested 1a 03 08 96 01
 * and packed 22 06 03 8e 02 9e a7 05). */
#include <stdint.h>
#include "lib/varint.h"
#include "output/pbenc.h"
#include "unit.h"

/* EXPECTED as hex pairs ("08 96 01"); compares with E's buffer and prints
 * both on a difference. */
static int same_bytes(const struct pbenc *e, const char *expected, int line)
{
	unsigned char want[512];
	size_t n = 0;
	for (const char *p = expected; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		unsigned v;
		if (sscanf(p, "%2x", &v) != 1 || n >= sizeof(want))
			return 0;
		want[n++] = (unsigned char)v;
		p += 2;
	}
	if (!pbenc_failed(e) && e->len == n && (n == 0 || !memcmp(e->buf, want, n)))
		return 1;
	fprintf(stderr, "test_pbenc.c:%d: expected %s\n  got", line, expected);
	for (size_t i = 0; i < e->len; i++)
		fprintf(stderr, " %02x", e->buf[i]);
	fprintf(stderr, "%s\n", pbenc_failed(e) ? " (failed)" : "");
	return 0;
}

#define CHECK_BYTES(e, hex) do { if (!same_bytes((e), (hex), __LINE__)) unit_cur_failed = 1; } while (0)

TEST(varints)
{
	static const struct { uint64_t v; const char *hex; } cases[] = {
		{ 0, "00" },
		{ 1, "01" },
		{ 127, "7f" },                    /* largest one-byte value */
		{ 128, "80 01" },                 /* 0000000 1 -> 80 01 */
		{ 150, "96 01" },                 /* the guide's example */
		{ 300, "ac 02" },                 /* 300 = 10 0101100 */
		{ 16383, "ff 7f" },
		{ 16384, "80 80 01" },
		{ 0xffffffffULL, "ff ff ff ff 0f" },
		/* 2^63: nine 7-bit groups of 0, then the top bit alone */
		{ 1ULL << 63, "80 80 80 80 80 80 80 80 80 01" },
		{ UINT64_MAX, "ff ff ff ff ff ff ff ff ff 01" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pbenc e;
		pbenc_init(&e);
		pbenc_varint(&e, cases[i].v);
		CHECK_BYTES(&e, cases[i].hex);
		CHECK_INT(varint_size(cases[i].v), e.len);
		/* and back, from a buffer that ends with the varint */
		const unsigned char *p = e.buf;
		uint64_t v = 7;
		CHECK_INT(varint_get(&p, e.buf + e.len, &v), 0);
		CHECK(v == cases[i].v);
		CHECK(p == e.buf + e.len);
		/* one byte short: it runs to the end */
		p = e.buf;
		CHECK_INT(varint_get(&p, e.buf + e.len - 1, &v), -1);
		pbenc_release(&e);
	}
}

TEST(varint_decoding_edges)
{
	/* a varint followed by more bytes stops at its last byte */
	static const unsigned char two[] = { 0xac, 0x02, 0x96, 0x01 };
	const unsigned char *p = two;
	uint64_t v = 0;
	CHECK_INT(varint_get(&p, two + 4, &v), 0);
	CHECK_INT(v, 300);
	CHECK_INT(varint_get(&p, two + 4, &v), 0);
	CHECK_INT(v, 150);
	CHECK_INT(varint_get(&p, two + 4, &v), -1);   /* nothing left */
	/* ten bytes at most: an eleventh is malformed */
	static const unsigned char eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
						0x80, 0x80, 0x01 };
	p = eleven;
	CHECK_INT(varint_get(&p, eleven + 11, &v), -1);
	/* a tenth byte above 1: the bits past the 64th are dropped */
	static const unsigned char wide[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					      0xff, 0x7f };
	p = wide;
	CHECK_INT(varint_get(&p, wide + 10, &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK(p == wide + 10);
	/* a zero-padded varint (more bytes than needed) is still read */
	static const unsigned char padded[] = { 0x81, 0x80, 0x00 };
	p = padded;
	CHECK_INT(varint_get(&p, padded + 3, &v), 0);
	CHECK_INT(v, 1);
}

/* DWARF's signed LEB128, on the examples of DWARF 5's table 7.7 and the
 * edges; a failed read leaves the pointer where it was. */
TEST(sleb128)
{
	static const struct { int64_t v; unsigned char b[10]; size_t n; } cases[] = {
		{ 2, { 0x02 }, 1 },
		{ -2, { 0x7e }, 1 },
		{ 127, { 0xff, 0x00 }, 2 },
		{ -127, { 0x81, 0x7f }, 2 },
		{ 128, { 0x80, 0x01 }, 2 },
		{ -128, { 0x80, 0x7f }, 2 },
		{ 129, { 0x81, 0x01 }, 2 },
		{ -129, { 0xff, 0x7e }, 2 },
		{ INT64_MIN, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f }, 10 },
		{ INT64_MAX, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00 }, 10 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const unsigned char *p = cases[i].b;
		int64_t v = 7;
		CHECK_INT(varint_get_sleb(&p, cases[i].b + cases[i].n, &v), 0);
		CHECK(v == cases[i].v);
		CHECK(p == cases[i].b + cases[i].n);
		p = cases[i].b;
		CHECK_INT(varint_get_sleb(&p, cases[i].b + cases[i].n - 1, &v), -1);
		CHECK(p == cases[i].b);
	}
	/* the unsigned reader leaves the pointer too */
	static const unsigned char cut[] = { 0x80, 0x80 };
	const unsigned char *p = cut;
	uint64_t u;
	CHECK_INT(varint_get(&p, cut + 2, &u), -1);
	CHECK(p == cut);
}

TEST(scalar_fields)
{
	struct pbenc e;
	pbenc_init(&e);
	pbenc_uint64(&e, 1, 150);          /* key 1<<3|0 = 08 */
	CHECK_BYTES(&e, "08 96 01");
	pbenc_release(&e);

	pbenc_init(&e);
	pbenc_uint64(&e, 12, 0);           /* written even when 0: key 12<<3 = 0x60 */
	pbenc_uint64(&e, 16, 1);           /* key 16<<3 = 128 needs two bytes: 80 01 */
	CHECK_BYTES(&e, "60 00 80 01 01");
	pbenc_release(&e);

	/* int64 -1 is 2^64-1 as a varint: ten bytes */
	pbenc_init(&e);
	pbenc_int64(&e, 2, -1);
	CHECK_BYTES(&e, "10 ff ff ff ff ff ff ff ff ff 01");
	pbenc_release(&e);

	/* -2 = 0xff..fe: first group 1111110 with the more bit -> fe */
	pbenc_init(&e);
	pbenc_int64(&e, 2, -2);
	CHECK_BYTES(&e, "10 fe ff ff ff ff ff ff ff ff 01");
	pbenc_release(&e);

	/* the _opt forms leave out proto3 defaults */
	pbenc_init(&e);
	pbenc_uint64_opt(&e, 1, 0);
	pbenc_int64_opt(&e, 2, 0);
	pbenc_bool_opt(&e, 7, false);
	CHECK_BYTES(&e, "");
	pbenc_uint64_opt(&e, 1, 5);
	pbenc_int64_opt(&e, 2, -1);
	pbenc_bool_opt(&e, 7, true);       /* key 7<<3 = 0x38 */
	CHECK_BYTES(&e, "08 05 10 ff ff ff ff ff ff ff ff ff 01 38 01");
	pbenc_release(&e);
}

TEST(strings)
{
	struct pbenc e;
	pbenc_init(&e);
	pbenc_string(&e, 2, "testing");   /* key 2<<3|2 = 12, length 7 */
	CHECK_BYTES(&e, "12 07 74 65 73 74 69 6e 67");
	pbenc_release(&e);

	/* the empty string is still a field: profile.proto's string_table[0] */
	pbenc_init(&e);
	pbenc_string(&e, 6, "");          /* key 6<<3|2 = 0x32 */
	pbenc_string(&e, 6, "a");
	CHECK_BYTES(&e, "32 00 32 01 61");
	pbenc_release(&e);

	/* a 200-byte string: length 200 = 1 1001000 -> c8 01 */
	char s[201];
	memset(s, 'x', 200);
	s[200] = 0;
	pbenc_init(&e);
	pbenc_string(&e, 1, s);
	CHECK_INT(e.len, 3 + 200);
	CHECK(e.buf[0] == 0x0a && e.buf[1] == 0xc8 && e.buf[2] == 0x01 && e.buf[3] == 'x');
	pbenc_release(&e);
}

TEST(packed)
{
	struct pbenc e;
	pbenc_init(&e);
	uint64_t v[] = { 3, 270, 86942 }; /* 03 | 8e 02 | 9e a7 05: 6 bytes */
	pbenc_packed_uint64(&e, 4, v, 3); /* key 4<<3|2 = 22 */
	CHECK_BYTES(&e, "22 06 03 8e 02 9e a7 05");
	pbenc_release(&e);

	pbenc_init(&e);
	int64_t w[] = { 0, -1, 1 };       /* 00 | ten bytes | 01: 12 = 0c */
	pbenc_packed_int64(&e, 2, w, 3);
	CHECK_BYTES(&e, "12 0c 00 ff ff ff ff ff ff ff ff ff 01 01");
	pbenc_packed_int64(&e, 2, w, 0);  /* nothing for an empty list */
	CHECK_INT(e.len, 14);
	pbenc_release(&e);
}

TEST(nested)
{
	struct pbenc e;
	pbenc_init(&e);
	size_t m = pbenc_begin(&e, 3);    /* key 3<<3|2 = 1a */
	pbenc_uint64(&e, 1, 150);
	pbenc_end(&e, m);
	CHECK_BYTES(&e, "1a 03 08 96 01");
	pbenc_release(&e);

	/* empty, and two levels deep: Location{id=1, line{function_id=2, line=3}} */
	pbenc_init(&e);
	m = pbenc_begin(&e, 1);
	pbenc_end(&e, m);
	m = pbenc_begin(&e, 4);
	pbenc_uint64(&e, 1, 1);
	size_t l = pbenc_begin(&e, 4);
	pbenc_uint64(&e, 1, 2);
	pbenc_int64(&e, 2, 3);
	pbenc_end(&e, l);
	pbenc_end(&e, m);
	/* line: 08 02 10 03 (4 bytes) -> 22 04 ...; location: 08 01 + 6 = 8 */
	CHECK_BYTES(&e, "0a 00 22 08 08 01 22 04 08 02 10 03");
	pbenc_release(&e);

	/* content of 203 bytes: the length takes two bytes (cb 01), so the
	 * content is moved after it was written */
	char s[201];
	memset(s, 'y', 200);
	s[200] = 0;
	pbenc_init(&e);
	pbenc_uint64(&e, 1, 7);
	m = pbenc_begin(&e, 2);
	pbenc_string(&e, 1, s);           /* 0a c8 01 + 200 bytes = 203 */
	pbenc_end(&e, m);
	pbenc_uint64(&e, 3, 9);
	CHECK_INT(e.len, 2 + 3 + 203 + 2);
	CHECK(e.buf[0] == 0x08 && e.buf[1] == 0x07);
	CHECK(e.buf[2] == 0x12 && e.buf[3] == 0xcb && e.buf[4] == 0x01);
	CHECK(e.buf[5] == 0x0a && e.buf[6] == 0xc8 && e.buf[7] == 0x01);
	CHECK(e.buf[8] == 'y' && e.buf[207] == 'y');
	CHECK(e.buf[208] == 0x18 && e.buf[209] == 0x09);
	pbenc_release(&e);
}

int main(void)
{
	RUN(varints);
	RUN(varint_decoding_edges);
	RUN(sleb128);
	RUN(scalar_fields);
	RUN(strings);
	RUN(packed);
	RUN(nested);
	return UNIT_END();
}
