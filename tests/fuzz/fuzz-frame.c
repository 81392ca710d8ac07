/*
 * fuzz-frame.c: libFuzzer target for the frame reader.  The input is a
 * byte stream as a peer might send it.  It is fed in chunks whose size
 * comes from the first byte (whole, one byte at a time, or odd sizes
 * that split headers), and frames are drained after every chunk until
 * the reader wants more or refuses the stream, as a link would.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "backend/proto/proto.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const size_t fuzz_chunks[] = { 0, 1, 2, 3, 5, 7, 64, 4099 };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_reader	 r;
	json_t			*msg;
	size_t			 chunk, n;
	int			 rc = 0;

	if (size == 0)
		return 0;
	chunk = fuzz_chunks[data[0] % (sizeof fuzz_chunks /
	    sizeof fuzz_chunks[0])];
	data++;
	size--;
	if (chunk == 0)
		chunk = size > 0 ? size : 1;
	proto_reader_init(&r);
	while (size > 0 && rc != -1) {
		n = size < chunk ? size : chunk;
		proto_reader_feed(&r, data, n);
		data += n;
		size -= n;
		while ((rc = proto_reader_next(&r, &msg)) == 1) {
			if (proto_type(msg)[0] == '\0')
				__builtin_trap();
			json_decref(msg);
		}
	}
	proto_reader_free(&r);
	return 0;
}
