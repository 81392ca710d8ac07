/*
 * message.c: the hello that opens each link, proto_pack, and base64 for the binary
 * values the rendezvous store carries (Gloo's blobs, NCCL's unique id).
 * The message types are in kind.c.
 *
 * hello carries the versions of everything that must agree across a
 * job, so a console can say which node runs a different build before a
 * collective hangs on it.  Gloo has no runtime version: its Debian
 * package version is taken at build time (gloo-version.h, made by
 * backend/proto/Makefile.inc), falling back to "libgloo-dev".  NCCL and
 * CUDA are "none" without CUDA, and "unknown" until the CUDA code
 * reports them.
 *
 * HUNTER_FAKE_VERSION, when set, replaces versions.hunter: fault
 * injection tests use it to play a node running another release.
 */
#include "config.h"

#include <cblas.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "build-id.h"
#include "lib/cuda-probe.h"
#include "lib/errf.h"
#include "lib/xmalloc.h"
#include "backend/proto/gloo-version.h"
#include "backend/proto/proto.h"

const char *const proto_seq_cmd_names[PROTO_SEQ_CMDS] = { "stop", "pause",
	"checkpoint", "resume" };

int
proto_seq_cmd(const char *name)
{
	for (int c = 0; name != NULL && c < PROTO_SEQ_CMDS; c++) {
		if (strcmp(name, proto_seq_cmd_names[c]) == 0)
			return c;
	}
	return -1;
}

static json_t *
message_versions(void)
{
	const char	*hunter = getenv("HUNTER_FAKE_VERSION");

	if (hunter == NULL)
		hunter = PACKAGE_VERSION;
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
	    "hunter", hunter,
	    "build", HUNTER_GIT_DESCRIBE " (" HUNTER_FEATURES ")",
	    "libc", gnu_get_libc_version(),
	    "openblas", openblas_get_config(),
	    "jansson", jansson_version_str(),
	    "gloo", HUNTER_GLOO_VERSION,
	    "nccl", cuda_nccl_version(),
	    "cuda", cuda_runtime_version(),
	    "driver", cuda_driver_version());
}

json_t *
proto_pack(char *err, size_t errlen, const char *fmt, ...)
{
	json_error_t	 je;
	va_list		 ap;
	json_t		*v;

	va_start(ap, fmt);
	v = json_vpack_ex(&je, 0, fmt, ap);
	va_end(ap);
	if (v == NULL)
		errf(err, errlen, "cannot encode the frame: %s", je.text);
	return v;
}

json_t *
proto_hello(const char *role, const char *node)
{
	json_t	*msg;

	msg = json_pack("{s:s, s:i, s:s, s:o}", "t", MSG_HELLO,
	    "proto", PROTO_VERSION, "role", role, "versions",
	    message_versions());
	if (msg == NULL)
		abort();
	json_object_set_new(msg, "node", node != NULL ? json_string(node) :
	    json_null());
	return msg;
}

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
proto_b64_encode(const void *data, size_t n)
{
	const uint8_t	*p = data;
	char		*out, *o;
	uint32_t	 v;
	size_t		 i;

	o = out = xmalloc((n + 2) / 3 * 4 + 1);
	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = b64_alphabet[v >> 18];
		*o++ = b64_alphabet[(v >> 12) & 63];
		*o++ = b64_alphabet[(v >> 6) & 63];
		*o++ = b64_alphabet[v & 63];
	}
	if (i < n) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = b64_alphabet[v >> 18];
		*o++ = b64_alphabet[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int
b64_value(char c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(b64_alphabet, c)) == NULL)
		return -1;
	return (int)(p - b64_alphabet);
}

/*
 * Strict decoding: the length is a multiple of 4, '=' only as the last
 * one or two characters, and the bits the padding drops are zero, so
 * each byte string has exactly one accepted encoding.
 */
void *
proto_b64_decode(const char *s, size_t *len)
{
	size_t		 n = strlen(s), pad = 0, i, j;
	uint8_t		*out;
	uint32_t	 v = 0;
	int		 k, c;

	if (n % 4 != 0)
		return NULL;
	if (n > 0 && s[n - 1] == '=')
		pad = s[n - 2] == '=' ? 2 : 1;
	out = xmalloc(n / 4 * 3 + 1);
	for (i = 0, j = 0; i < n; i += 4) {
		v = 0;
		for (k = 0; k < 4; k++) {
			if (i + k >= n - pad)
				c = 0;
			else if ((c = b64_value(s[i + k])) < 0)
				goto bad;
			v = v << 6 | (uint32_t)c;
		}
		out[j++] = (uint8_t)(v >> 16);
		if (i + 4 < n || pad < 2)
			out[j++] = (uint8_t)(v >> 8);
		if (i + 4 < n || pad < 1)
			out[j++] = (uint8_t)v;
	}
	if ((pad == 2 && (v & 0xffff) != 0) || (pad == 1 && (v & 0xff) != 0))
		goto bad;
	*len = j;
	return out;
bad:
	free(out);
	return NULL;
}
