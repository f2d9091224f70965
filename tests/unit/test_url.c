/* URLs as PROFILE arguments: which arguments are URLs, jeprof's rules for
 * what is fetched (its ParseProfileURL and FetchDynamicProfile, checked
 * against jeprof 5.3.0's code), jheap's query-string rule, the saved
 * file's name, and the reading of a /pprof/symbol answer. */
#include <math.h>
#include "analyzer/profile.h"
#include "cli/remote.h"
#include "cli/url.h"
#include "unit.h"

static struct url_target t;

static int target(const char *arg, long seconds)
{
	char err[256];
	int rc = url_target(arg, seconds, &t, err, sizeof(err));
	if (rc)
		fprintf(stderr, "url_target(%s): %s\n", arg, err);
	return rc;
}

TEST(url_forms)
{
	CHECK(url_form("http://localhost:8080/debug/mem"));
	CHECK(url_form("HTTPS://example.com/pprof/heap"));
	CHECK(url_form("localhost:8080"));
	CHECK(url_form("localhost:8080/pprof/heap"));
	CHECK(url_form("127.0.0.1:1?trigger_dump=true"));
	CHECK(url_form("[::1]:8080/pprof/heap"));
	CHECK(url_form("my_host-1.example:65535/x"));
	CHECK(!url_form("jeprof.1234.0.f.heap"));
	CHECK(!url_form("-"));
	CHECK(!url_form("/tmp/x:80"));
	CHECK(!url_form("./host:80"));
	CHECK(!url_form("host:"));
	CHECK(!url_form("host:65536"));
	CHECK(!url_form("host:123456"));
	CHECK(!url_form("host:80x"));
	CHECK(!url_form(":80"));
	CHECK(!url_form("[]:80"));
	CHECK(!url_form("ftp://host/pprof/heap"));
	CHECK(!url_form("C:/heap"));
}

TEST(url_no_page_gets_pprof_profile)
{
	/* Databend's documented form */
	CHECK_INT(target("http://localhost:8080/debug/mem", 30), 0);
	CHECK_STR(t.url, "http://localhost:8080/debug/mem/pprof/profile?seconds=30");
	CHECK_STR(t.symbol_url, "http://localhost:8080/debug/mem/pprof/symbol");
	CHECK_STR(t.host, "localhost");
	CHECK_STR(t.suffix, "");
	CHECK(t.collects);
	CHECK(fabs(t.collect_seconds - 30) < 1e-9);
	CHECK(fabs(t.time_limit - (30 * 1.01 + 60)) < 1e-9);
	/* one trailing slash is dropped, as jeprof's (/|$PROFILES)? does */
	CHECK_INT(target("localhost:8080/debug/mem/", 5), 0);
	CHECK_STR(t.url, "http://localhost:8080/debug/mem/pprof/profile?seconds=5");
	CHECK(fabs(t.time_limit - 65.05) < 1e-9);
	CHECK_INT(target("host:1234", 0), 0);
	CHECK_STR(t.url, "http://host:1234/pprof/profile?seconds=0");
	CHECK_STR(t.symbol_url, "http://host:1234/pprof/symbol");
	CHECK_INT(target("http://host:1234/", 30), 0);
	CHECK_STR(t.url, "http://host:1234/pprof/profile?seconds=30");
}

TEST(url_known_pages_as_given)
{
	CHECK_INT(target("http://myserver.com:80/pprof/heap", 30), 0);
	CHECK_STR(t.url, "http://myserver.com:80/pprof/heap");
	CHECK_STR(t.symbol_url, "http://myserver.com:80/pprof/symbol");
	CHECK_STR(t.suffix, ".pprof.heap");
	CHECK(!t.collects);
	CHECK(fabs(t.time_limit - URL_PLAIN_TIMEOUT) < 1e-9);
	CHECK_INT(target("host:1/brpc/pprof/growth", 30), 0);
	CHECK_STR(t.url, "http://host:1/brpc/pprof/growth");
	CHECK_STR(t.symbol_url, "http://host:1/brpc/pprof/symbol");
	CHECK_STR(t.suffix, ".pprof.growth");
	CHECK_INT(target("https://h/x/pprof/profile", 7), 0);
	CHECK_STR(t.url, "https://h/x/pprof/profile?seconds=7");
	CHECK_STR(t.symbol_url, "https://h/x/pprof/symbol");
	CHECK_INT(target("HTTP://H:9/pprof/pmuprofile", 7), 0);
	CHECK_STR(t.url, "http://H:9/pprof/pmuprofile?seconds=7");
	CHECK(t.collects);
}

TEST(url_query_as_written)
{
	/* libmtev's documented form */
	CHECK_INT(target("127.0.0.1:8888/mtev/heap_profile?trigger_dump=true", 30), 0);
	CHECK_STR(t.url, "http://127.0.0.1:8888/mtev/heap_profile?trigger_dump=true");
	CHECK_STR(t.symbol_url, "http://127.0.0.1:8888/pprof/symbol");
	CHECK_STR(t.suffix, ".mtev.heap_profile");
	CHECK(!t.collects);
	/* Databend's curl form: the wait is the query's */
	CHECK_INT(target("http://localhost:8080/debug/mem/pprof/profile?seconds=0", 30), 0);
	CHECK_STR(t.url, "http://localhost:8080/debug/mem/pprof/profile?seconds=0");
	CHECK_STR(t.symbol_url, "http://localhost:8080/debug/mem/pprof/symbol");
	CHECK(t.collects);
	CHECK(fabs(t.collect_seconds) < 1e-9);
	CHECK(fabs(t.time_limit - 60) < 1e-9);
	CHECK_INT(target("http://h/pprof/profile?x=1&seconds=90", 30), 0);
	CHECK(fabs(t.collect_seconds - 90) < 1e-9);
	/* no seconds in the query: the server's default, taken as --seconds */
	CHECK_INT(target("http://h/pprof/profile?x=1", 12), 0);
	CHECK(fabs(t.collect_seconds - 12) < 1e-9);
}

TEST(url_hosts)
{
	CHECK_INT(target("http://user:pw@example.com:8080/pprof/heap", 30), 0);
	CHECK_STR(t.host, "example.com");
	CHECK_INT(target("[::1]:8080/pprof/heap", 30), 0);
	CHECK_STR(t.url, "http://[::1]:8080/pprof/heap");
	CHECK_STR(t.host, "::1");
	char err[256];
	CHECK_INT(url_target("http:///pprof/heap", 30, &t, err, sizeof(err)), -5);
	CHECK(strstr(err, "no host"));
	CHECK_INT(url_target("http://h/a b", 30, &t, err, sizeof(err)), -5);
	CHECK_INT(url_target("http://h/a\r\nX-Injected: 1", 30, &t, err, sizeof(err)), -5);
	static char longurl[URL_MAX + 10];
	memset(longurl, 'a', sizeof(longurl) - 1);
	memcpy(longurl, "http://", 7);
	CHECK_INT(url_target(longurl, 30, &t, err, sizeof(err)), -5);
	CHECK(strstr(err, "too long"));
}

/* git's rule: the user information goes from every URL shown; the
 * request keeps it. */
TEST(url_credentials_not_shown)
{
	char buf[256];
	url_redact(buf, sizeof(buf), "http://user:secret@example.com:8080/pprof/heap");
	CHECK_STR(buf, "http://example.com:8080/pprof/heap");
	url_redact(buf, sizeof(buf), "HTTPS://user@h/x?a=b@c");
	CHECK_STR(buf, "HTTPS://h/x?a=b@c");
	/* an unencoded '@' in the password: up to the last '@' of the authority */
	url_redact(buf, sizeof(buf), "http://u:p@ss@h:1/pprof/heap");
	CHECK_STR(buf, "http://h:1/pprof/heap");
	url_redact(buf, sizeof(buf), "http://h/a@b");
	CHECK_STR(buf, "http://h/a@b");
	url_redact(buf, sizeof(buf), "localhost:8080/pprof/heap");
	CHECK_STR(buf, "localhost:8080/pprof/heap");
	url_redact(buf, 8, "http://u:p@host/x");
	CHECK_STR(buf, "http://");
	CHECK_INT(target("http://u:p@ss@example.com/debug/mem", 30), 0);
	CHECK_STR(t.url, "http://u:p@ss@example.com/debug/mem/pprof/profile?seconds=30");
	CHECK_STR(t.symbol_url, "http://u:p@ss@example.com/debug/mem/pprof/symbol");
	CHECK_STR(t.shown, "http://example.com/debug/mem/pprof/profile?seconds=30");
	CHECK_STR(t.symbol_shown, "http://example.com/debug/mem/pprof/symbol");
	CHECK_STR(t.host, "example.com");
	char err[256];
	CHECK_INT(url_target("http://user:secret@/pprof/heap", 30, &t, err, sizeof(err)), -5);
	CHECK(strstr(err, "no host") && !strstr(err, "secret"));
}

TEST(url_save_names)
{
	char name[256];
	CHECK_INT(target("http://localhost:8080/debug/mem", 30), 0);
	CHECK_INT(url_save_name(name, sizeof(name), "/usr/bin/databend-query", 1700000000, &t), 0);
	CHECK_STR(name, "databend-query.1700000000.localhost");
	CHECK_INT(target("[::1]:80/pprof/heap", 30), 0);
	CHECK_INT(url_save_name(name, sizeof(name), NULL, 5, &t), 0);
	CHECK_STR(name, "profile.5.__1.pprof.heap");
	CHECK_INT(target("h:1/mtev/heap_profile?trigger_dump=true", 30), 0);
	CHECK_INT(url_save_name(name, sizeof(name), "./a b/..", 5, &t), 0);
	CHECK_STR(name, "_..5.h.mtev.heap_profile");
	CHECK_INT(url_save_name(name, 10, "prog", 5, &t), -1);
}

TEST(symbol_answers)
{
	struct profile p;
	CHECK_INT(profile_init(&p), 0);
	uint64_t pcs[] = { 0x401000, 0x401010, 0x401020, 0x401030, 0x5555deadbeef };
	const char body[] =
		"0x0000000000401000\t_ZN2ns6HolderIiE3addEi\r\n"   /* gperftools: mangled, CRLF */
		"0x401010 plain_c_function\n"                       /* brpc-like */
		"  0X401020   ??\n"                                  /* unknown */
		"0x401030\t\n"                                      /* empty name */
		"0x999999 not_asked_for\n"
		"garbage line\n"
		"0x5555DEADBEEF std::vector<int, std::allocator<int> >::push_back(int const&)";
	size_t named = 0;
	CHECK_INT(remote_read_symbols(&p, body, strlen(body), pcs, 5, &named), 0);
	CHECK_INT(named, 3);
	CHECK_STR(strtab_get(&p.strs, profile_presym_find(&p, 0x401000)), "ns::Holder<int>::add(int)");
	CHECK_STR(strtab_get(&p.strs, profile_presym_find(&p, 0x401010)), "plain_c_function");
	CHECK_INT(profile_presym_find(&p, 0x401020), 0);
	CHECK_INT(profile_presym_find(&p, 0x401030), 0);
	CHECK_INT(profile_presym_find(&p, 0x999999), 0);
	CHECK_STR(strtab_get(&p.strs, profile_presym_find(&p, 0x5555deadbeef)),
		  "std::vector<int, std::allocator<int> >::push_back(int const&)");
	profile_release(&p);
}

int main(void)
{
	RUN(url_forms);
	RUN(url_no_page_gets_pprof_profile);
	RUN(url_known_pages_as_given);
	RUN(url_query_as_written);
	RUN(url_hosts);
	RUN(url_credentials_not_shown);
	RUN(url_save_names);
	RUN(symbol_answers);
	return UNIT_END();
}
