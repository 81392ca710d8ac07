/*
 * tokens.h: the training data of a language model.  Two sources:
 *
 *  - token shards in llm.c's format, as public tokenized corpora ship
 *    them: a header of 256 little-endian int32 (magic 20240520, version 1,
 *    the token count, then zeros), then the tokens as little-endian
 *    uint16.  Shards are memory-mapped, never read whole, and checked
 *    before use: every token is below the vocabulary.
 *  - any text, whose bytes are the tokens (vocabulary 256): a file, a
 *    directory read file by file in name order, or a glob.  Files that
 *    are not text (a NUL byte in them, as in fortune's .dat indexes) and
 *    links to files already read (fortune's .u8 links) are skipped with a
 *    note.  The last TOKENS_VAL_PERCENT of each file is its validation
 *    part.
 *
 * A part (train or validation) is a list of segments; a window of T + 1
 * tokens lies inside one segment, and windows are addressed by one index
 * over all of a part's window starts, so that a window drawn from the
 * seed names the same tokens on every rank and at every world size.
 */
#ifndef HUNTER_TOKENS_H
#define HUNTER_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#define TOKENS_MAGIC		20240520
#define TOKENS_VERSION		1
#define TOKENS_HEADER_INTS	256
#define TOKENS_VAL_PERCENT	5	/* of each text file, from its end */
#define TOKENS_GPT2_VOCAB	50257

struct token_segment {
	const void	*base;		/* uint8 (text) or uint16 (shards) */
	size_t		 n;		/* tokens */
	int		 width;		/* bytes a token: 1 or 2 */
};

struct token_part {
	struct token_segment *seg;
	int		 nseg;
	size_t		 ntokens;
};

struct token_map;			/* one mapped shard */

struct token_corpus {
	int		 vocab;
	struct token_part train, val;
	char		*text;		/* the bytes of a text corpus */
	struct token_map *maps;
	int		 nmaps;
	int		 files;		/* files read */
};

/* A note about a file that was skipped, for the worker's log. */
typedef void	(*tokens_note_fn)(void *ctx, const char *msg);

/*
 * Map the shards of train_glob (in name order) and the validation shard
 * val (may be NULL or "": then the last shard is the validation part when
 * there are two or more, else there is none).  Tokens must be below
 * vocab.  0, or -1 with a message naming the file and the fault.
 */
int	tokens_open_shards(struct token_corpus *, const char *train_glob,
	    const char *val, int vocab, char *err, size_t errlen);
/* Read text from a file, a directory or a glob.  0, or -1 with err. */
int	tokens_open_text(struct token_corpus *, const char *path,
	    tokens_note_fn, void *ctx, char *err, size_t errlen);
void	tokens_close(struct token_corpus *);
/* Append n tokens of width bytes at base to part p (tokens-text.c). */
void	tokens_add_segment(struct token_part *, const void *base, size_t n,
	    int width);

/* Check one shard file without keeping it (for validate).  0 or -1. */
int	tokens_check_shard(const char *path, int vocab, char *err,
	    size_t errlen);
/* Check the data of a job in format tokens (the shards of train_glob and
 * val) or text (path, "" for the default): what the worker would refuse,
 * said before a launch.  0, or -1 with err. */
int	tokens_check_data(int text, const char *train_glob, const char *val,
	    const char *path, int vocab, char *err, size_t errlen);

/* How many windows of T + 1 tokens a part holds. */
uint64_t tokens_windows(const struct token_part *, int T);
/* Copy window w (0 <= w < tokens_windows) as T + 1 int32 tokens. */
void	tokens_window(const struct token_part *, uint64_t w, int T,
	    int32_t *out);
/* The window of sample i of global step `step` of a run seeded with seed:
 * a function of these alone, uniform over nwindows. */
uint64_t tokens_draw(uint64_t seed, long step, long i, uint64_t nwindows);

#endif
