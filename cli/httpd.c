/* The web UI's HTTP server over libmicrohttpd, loaded when first needed
 * (see httpd.h for what it enforces). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli/httpd.h"
#include "lib/dynlib.h"
#include "lib/errors.h"

/* The libmicrohttpd functions used here; microhttpd.h gives their types. */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

#define FN(f) DYNLIB_FN(mhd.f, "MHD_" #f)
static const struct dynlib_fn mhd_fns[] = {
	FN(start_daemon), FN(stop_daemon), FN(get_daemon_info), FN(lookup_connection_value),
	FN(get_connection_values), FN(create_response_from_buffer), FN(add_response_header),
	FN(queue_response), FN(destroy_response),
};
#undef FN

static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static char mhd_missing[1024];

static void mhd_init(void)
{
	char why[sizeof(mhd_missing) - 100];
	if (dynlib_load("libmicrohttpd.so.12", mhd_fns, sizeof(mhd_fns) / sizeof(*mhd_fns), why,
			sizeof(why)))
		snprintf(mhd_missing, sizeof(mhd_missing),
			 "--http needs GNU libmicrohttpd (libmicrohttpd.so.12, Debian package libmicrohttpd12): %s",
			 why);
}

struct httpd {
	struct MHD_Daemon *daemon;
	httpd_handler fn;
	void *ctx;
	char host[300];          /* as URLs name it */
	char given[256];         /* HOST as typed */
	char addr[INET6_ADDRSTRLEN + 2]; /* the address bound, v6 in brackets */
	unsigned port;
	bool loopback;
};

struct httpd_request {
	struct MHD_Connection *conn;
	const char *method, *path;
};

const char *httpd_method(const struct httpd_request *r) { return r->method; }
const char *httpd_path(const struct httpd_request *r) { return r->path; }

struct each {
	int (*fn)(void *, const char *, const char *);
	void *ctx;
	int rc;
};

static enum MHD_Result each_value(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct each *e = cls;
	(void)kind;
	e->rc = e->fn(e->ctx, key, value ? value : "");
	return e->rc ? MHD_NO : MHD_YES;
}

int httpd_each_param(const struct httpd_request *r,
		     int (*fn)(void *ctx, const char *key, const char *value), void *ctx)
{
	struct each e = { fn, ctx, 0 };
	mhd.get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, each_value, &e);
	return e.rc;
}

void httpd_reply(struct httpd_response *resp, int status, const char *type, const char *body,
		 size_t len)
{
	free(resp->body);
	resp->body = malloc(len + 1);
	if (!resp->body) {
		resp->status = 500;
		resp->type = "text/plain; charset=utf-8";
		resp->len = 0;
		return;
	}
	memcpy(resp->body, body, len);
	resp->body[len] = '\0';
	resp->len = len;
	resp->status = status;
	resp->type = type;
}

void httpd_replyf(struct httpd_response *resp, int status, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	httpd_reply(resp, status, "text/plain; charset=utf-8", buf, (size_t)n);
}

/* Whether the Host header V names this server (see httpd.h). */
static bool host_ok(const struct httpd *h, const char *v)
{
	char name[300];
	const char *colon;
	if (v[0] == '[') {
		const char *end = strchr(v, ']');
		if (!end)
			return false;
		colon = end[1] == ':' ? end + 1 : end[1] ? NULL : end + 1;
		if (!colon)
			return false;
	} else {
		colon = strchr(v, ':');
		if (!colon)
			colon = v + strlen(v);
	}
	size_t n = (size_t)(colon - v);
	if (n >= sizeof(name) || !n)
		return false;
	memcpy(name, v, n);
	name[n] = '\0';
	if (*colon == ':') {
		char *end;
		unsigned long port = strtoul(colon + 1, &end, 10);
		if (end == colon + 1 || *end || port != h->port)
			return false;
	}
	const char *ok[] = { "localhost", "127.0.0.1", "[::1]", h->given, h->addr };
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		if (ok[i][0] && !strcasecmp(name, ok[i]))
			return true;
	return false;
}

static int count_param(void *ctx, const char *key, const char *value)
{
	(void)value;
	const char **seen = ctx;
	for (size_t i = 0; i < 64 && seen[i]; i++)
		if (!strcmp(seen[i], key))
			return 1;
	for (size_t i = 0; i < 64; i++)
		if (!seen[i]) {
			seen[i] = key;
			return 0;
		}
	return 2;
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct httpd_response *r)
{
	struct MHD_Response *m = mhd.create_response_from_buffer(r->len, r->body,
								 MHD_RESPMEM_MUST_FREE);
	if (!m) {
		free(r->body);
		return MHD_NO;
	}
	r->body = NULL;
	mhd.add_response_header(m, "Content-Type", r->type ? r->type : "text/plain; charset=utf-8");
	mhd.add_response_header(m, "Content-Security-Policy", r->csp ? r->csp : HTTPD_CSP);
	mhd.add_response_header(m, "X-Content-Type-Options", "nosniff");
	mhd.add_response_header(m, "Referrer-Policy", "no-referrer");
	mhd.add_response_header(m, "Cache-Control", "no-store");
	mhd.add_response_header(m, "X-Frame-Options", "SAMEORIGIN");
	if (r->location)
		mhd.add_response_header(m, "Location", r->location);
	enum MHD_Result rc = mhd.queue_response(conn, (unsigned)r->status, m);
	mhd.destroy_response(m);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **state)
{
	struct httpd *h = cls;
	(void)version;
	(void)upload;
	static int marker;
	if (!*state) {
		*state = &marker;   /* the first call: answer on the next */
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;   /* a body is never used */
		return MHD_YES;
	}
	struct httpd_response resp = { .status = 200 };
	const char *host = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *seen[65] = { 0 };
	bool post = !strcmp(method, "POST");
	if (!host) {
		httpd_replyf(&resp, 400, "jheap: the request has no Host header\n");
	} else if (!host_ok(h, host)) {
		httpd_replyf(&resp, 403, "jheap: the Host header does not name this server; open http://%s:%u/ui/\n",
			     h->host, h->port);
	} else if (strcmp(method, "GET") && strcmp(method, "HEAD") && !post) {
		httpd_replyf(&resp, 405, "jheap: only GET, HEAD and POST are served\n");
	} else if (post && !(mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "X-Jheap") &&
			     !strcmp(mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "X-Jheap"), "1"))) {
		httpd_replyf(&resp, 403, "jheap: a POST needs the header X-Jheap: 1\n");
	} else if (mhd.get_connection_values(conn, MHD_GET_ARGUMENT_KIND, NULL, NULL) > 64) {
		httpd_replyf(&resp, 400, "jheap: too many query parameters\n");
	} else {
		struct httpd_request req = { conn, method, url };
		if (httpd_each_param(&req, count_param, seen))
			httpd_replyf(&resp, 400, "jheap: a query parameter is given twice\n");
		else
			h->fn(h->ctx, &req, &resp);
	}
	if (!resp.body)
		httpd_reply(&resp, resp.status, resp.type, "", 0);
	return send_response(conn, &resp);
}

/* Splits "[HOST]:PORT" into H->given and *PORT. */
static int split_hostport(struct httpd *h, const char *hp, unsigned *port, char *err, size_t errlen)
{
	const char *colon = strrchr(hp, ':');
	if (!colon)
		return jh_err(err, errlen, JH_EUSAGE, "--http expects [HOST]:PORT (':0' picks a free port), not '%s'", hp);
	const char *host = hp;
	size_t n = (size_t)(colon - hp);
	if (n >= 2 && hp[0] == '[' && hp[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (n >= sizeof(h->given))
		return jh_err(err, errlen, JH_EUSAGE, "--http: the host name is too long");
	memcpy(h->given, host, n);
	h->given[n] = '\0';
	char *end;
	unsigned long p = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || *end || p > 65535 || colon[1] == '-' || colon[1] == '+')
		return jh_err(err, errlen, JH_EUSAGE, "--http: '%s' is not a port (0 to 65535)", colon + 1);
	*port = (unsigned)p;
	return 0;
}

int httpd_check_address(const char *hostport, char *err, size_t errlen)
{
	struct httpd h;
	unsigned port;
	return split_hostport(&h, hostport, &port, err, errlen);
}

int httpd_start(struct httpd **out, const char *hostport, httpd_handler fn, void *ctx,
		char *err, size_t errlen)
{
	*out = NULL;
	struct httpd *h = calloc(1, sizeof(*h));
	if (!h)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	unsigned port = 0;
	int rc = split_hostport(h, hostport, &port, err, errlen);
	if (rc) {
		free(h);
		return rc;
	}
	pthread_once(&mhd_once, mhd_init);
	if (mhd_missing[0]) {
		free(h);
		return jh_err(err, errlen, JH_EIO, "%s", mhd_missing);
	}
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	socklen_t sslen;
	const char *name = h->given[0] ? h->given : "127.0.0.1";
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC }, *ai = NULL;
	int g = getaddrinfo(name, NULL, &hints, &ai);
	if (g || !ai) {
		free(h);
		return jh_err(err, errlen, JH_EUSAGE, "--http: cannot resolve '%s': %s", name, gai_strerror(g));
	}
	memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
	sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	bool v6 = ss.ss_family == AF_INET6;
	char a[INET6_ADDRSTRLEN];
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_port = htons((uint16_t)port);
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(h->addr, sizeof(h->addr), "[%s]", a);
		h->loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_port = htons((uint16_t)port);
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(h->addr, sizeof(h->addr), "%s", a);
		h->loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	(void)sslen;
	snprintf(h->host, sizeof(h->host), "%s", h->given[0] ? (strchr(h->given, ':') ? h->addr : h->given) : "127.0.0.1");
	h->fn = fn;
	h->ctx = ctx;
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | (v6 ? MHD_USE_IPv6 : 0);
	h->daemon = mhd.start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, h,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)4,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)512,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				     MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)256,
				     MHD_OPTION_END);
	if (!h->daemon) {
		rc = jh_err(err, errlen, JH_EIO, "--http: cannot listen on %s:%u (in use, or not an address of this machine)",
			    h->addr, port);
		free(h);
		return rc;
	}
	const union MHD_DaemonInfo *info = mhd.get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : port;
	*out = h;
	return 0;
}

unsigned httpd_port(const struct httpd *h) { return h->port; }
const char *httpd_host(const struct httpd *h) { return h->host; }
bool httpd_loopback(const struct httpd *h) { return h->loopback; }

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	mhd.stop_daemon(h->daemon);
	free(h);
}
