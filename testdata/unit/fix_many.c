/* Fixture for tests/unit/test_symcache.c and test_linetab.c, built by
 * tests/unit/build-fixtures.sh: one unit with more top-level functions than
 * a partial unit index takes (PARTIAL_MAX_TOPS in symbolize/cuindex.c)
 * before it becomes a full one, and with two inlined helpers so that its
 * functions have inline scopes too. */

static inline int sq(int x)
{
	return x * x;
}

static inline int twice(int x)
{
	return sq(x) + sq(x + 1);
}

__attribute__((noinline)) int many00(int x)
{
	return twice(x + 0) - 0;
}

__attribute__((noinline)) int many01(int x)
{
	return twice(x + 1) - 3;
}

__attribute__((noinline)) int many02(int x)
{
	return twice(x + 2) - 6;
}

__attribute__((noinline)) int many03(int x)
{
	return twice(x + 3) - 9;
}

__attribute__((noinline)) int many04(int x)
{
	return twice(x + 4) - 12;
}

__attribute__((noinline)) int many05(int x)
{
	return twice(x + 5) - 15;
}

__attribute__((noinline)) int many06(int x)
{
	return twice(x + 6) - 18;
}

__attribute__((noinline)) int many07(int x)
{
	return twice(x + 7) - 21;
}

__attribute__((noinline)) int many08(int x)
{
	return twice(x + 8) - 24;
}

__attribute__((noinline)) int many09(int x)
{
	return twice(x + 9) - 27;
}

__attribute__((noinline)) int many10(int x)
{
	return twice(x + 10) - 30;
}

__attribute__((noinline)) int many11(int x)
{
	return twice(x + 11) - 33;
}

__attribute__((noinline)) int many12(int x)
{
	return twice(x + 12) - 36;
}

__attribute__((noinline)) int many13(int x)
{
	return twice(x + 13) - 39;
}

__attribute__((noinline)) int many14(int x)
{
	return twice(x + 14) - 42;
}

__attribute__((noinline)) int many15(int x)
{
	return twice(x + 15) - 45;
}

__attribute__((noinline)) int many16(int x)
{
	return twice(x + 16) - 48;
}

__attribute__((noinline)) int many17(int x)
{
	return twice(x + 17) - 51;
}

__attribute__((noinline)) int many18(int x)
{
	return twice(x + 18) - 54;
}

__attribute__((noinline)) int many19(int x)
{
	return twice(x + 19) - 57;
}

__attribute__((noinline)) int many20(int x)
{
	return twice(x + 20) - 60;
}

__attribute__((noinline)) int many21(int x)
{
	return twice(x + 21) - 63;
}

__attribute__((noinline)) int many22(int x)
{
	return twice(x + 22) - 66;
}

__attribute__((noinline)) int many23(int x)
{
	return twice(x + 23) - 69;
}

__attribute__((noinline)) int many24(int x)
{
	return twice(x + 24) - 72;
}

__attribute__((noinline)) int many25(int x)
{
	return twice(x + 25) - 75;
}

__attribute__((noinline)) int many26(int x)
{
	return twice(x + 26) - 78;
}

__attribute__((noinline)) int many27(int x)
{
	return twice(x + 27) - 81;
}

__attribute__((noinline)) int many28(int x)
{
	return twice(x + 28) - 84;
}

__attribute__((noinline)) int many29(int x)
{
	return twice(x + 29) - 87;
}

__attribute__((noinline)) int many30(int x)
{
	return twice(x + 30) - 90;
}

__attribute__((noinline)) int many31(int x)
{
	return twice(x + 31) - 93;
}

__attribute__((noinline)) int many32(int x)
{
	return twice(x + 32) - 96;
}

__attribute__((noinline)) int many33(int x)
{
	return twice(x + 33) - 99;
}

__attribute__((noinline)) int many34(int x)
{
	return twice(x + 34) - 102;
}

__attribute__((noinline)) int many35(int x)
{
	return twice(x + 35) - 105;
}

__attribute__((noinline)) int many36(int x)
{
	return twice(x + 36) - 108;
}

__attribute__((noinline)) int many37(int x)
{
	return twice(x + 37) - 111;
}

__attribute__((noinline)) int many38(int x)
{
	return twice(x + 38) - 114;
}

__attribute__((noinline)) int many39(int x)
{
	return twice(x + 39) - 117;
}

int main(int argc, char **argv)
{
	int s = 0;

	(void)argv;
	s += many00(argc);
	s += many01(argc);
	s += many02(argc);
	s += many03(argc);
	s += many04(argc);
	s += many05(argc);
	s += many06(argc);
	s += many07(argc);
	s += many08(argc);
	s += many09(argc);
	s += many10(argc);
	s += many11(argc);
	s += many12(argc);
	s += many13(argc);
	s += many14(argc);
	s += many15(argc);
	s += many16(argc);
	s += many17(argc);
	s += many18(argc);
	s += many19(argc);
	s += many20(argc);
	s += many21(argc);
	s += many22(argc);
	s += many23(argc);
	s += many24(argc);
	s += many25(argc);
	s += many26(argc);
	s += many27(argc);
	s += many28(argc);
	s += many29(argc);
	s += many30(argc);
	s += many31(argc);
	s += many32(argc);
	s += many33(argc);
	s += many34(argc);
	s += many35(argc);
	s += many36(argc);
	s += many37(argc);
	s += many38(argc);
	s += many39(argc);
	return s & 1;
}
