/*
 * suggest.h: the "did you mean" behind unknown keys, values and options:
 * the known name nearest to what was written, when it is a likely slip.
 */
#ifndef HUNTER_SUGGEST_H
#define HUNTER_SUGGEST_H

/*
 * The name of names (NULL-ended) that word most likely meant, or NULL:
 * one within one edit (adjacent transpositions count as one) for names of
 * up to three letters, two for longer ones; else a name spelled by the
 * initials of word's parts (learning_rate: lr); else a name that is one
 * of word's parts (batch_size: batch), or the only name that has word as
 * one of its parts.  Parts are cut at '_' and '-'.
 */
const char	*suggest(const char *word, const char *const *names);

#endif
