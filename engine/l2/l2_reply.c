/*
 * l2_reply.c: hiredis's reader, bounded to what a dnsnap reply can need
 * (l2_int.h, L2_REPLY_*): its reply-building functions wrapped, so that an
 * array or a reply over the bounds is refused before hiredis reserves room
 * for it (hiredis 0.14 callocs a multi-bulk's count at once and has no
 * maxelements); and the blocking read of the bulk calls, which also stops
 * once too many bytes wait unparsed (a bulk string announced at 2 GB and
 * streamed, a line that never ends).
 *
 * The counts are per reply: the reader calls create*() for the reply's root
 * (a task without a parent) first, which resets them.
 */
#include <stdio.h>

#include "l2_int.h"

static struct l2_bound *bound_of(const redisReadTask *t)
{
	struct l2_bound *b = t->privdata;
	if (t->parent == NULL)
		b->elements = b->bytes = 0;
	return b;
}

static void *over(struct l2_bound *b, const char *why)
{
	b->over = why;
	return NULL; /* the reader's "out of memory": an error, the connection dropped */
}

static void *b_string(const redisReadTask *t, char *str, size_t len)
{
	struct l2_bound *b = bound_of(t);
	if (len > L2_REPLY_BYTES_MAX - b->bytes)
		return over(b, "more than 32 MB of strings");
	b->bytes += len;
	return b->orig->createString(t, str, len);
}

static void *b_array(const redisReadTask *t, int elements)
{
	struct l2_bound *b = bound_of(t);
	if (elements > (int)L2_ARRAY_MAX)
		return over(b, "an array of more than 100000 elements");
	if ((size_t)elements > L2_REPLY_ELEMENTS_MAX - b->elements)
		return over(b, "more than 1000000 elements");
	b->elements += (size_t)elements;
	return b->orig->createArray(t, elements);
}

static void *b_integer(const redisReadTask *t, long long v)
{
	return bound_of(t)->orig->createInteger(t, v);
}

static void *b_nil(const redisReadTask *t)
{
	return bound_of(t)->orig->createNil(t);
}

/* hiredis's reader takes a non-const table; this one is never written. */
static redisReplyObjectFunctions bounded = {
	.createString = b_string,
	.createArray = b_array,
	.createInteger = b_integer,
	.createNil = b_nil,
	.freeObject = freeReplyObject,
};

void dnsnap__l2_reader_bound(redisReader *r, struct l2_bound *b)
{
	b->elements = b->bytes = 0;
	b->over = NULL;
	b->orig = r->fn;
	if (r->fn == NULL) /* a reader that builds nothing: nothing to bound */
		return;
	r->fn = &bounded;
	r->privdata = b;
}

int dnsnap__l2_reader_full(const redisReader *r)
{
	return r->len - r->pos > L2_REPLY_BYTES_MAX;
}

const char *dnsnap__l2_reader_over(const redisReader *r, const struct l2_bound *b)
{
	if (b != NULL && b->over != NULL)
		return b->over;
	return dnsnap__l2_reader_full(r) ? "more than 32 MB waiting to be parsed" : NULL;
}

int dnsnap__l2_get_reply(redisContext *c, const struct l2_bound *b, void **reply, char *err,
			 size_t errcap)
{
	const char *why;
	int done = 0;
	*reply = NULL;
	do {
		if (redisBufferWrite(c, &done) != REDIS_OK)
			goto fail;
	} while (!done);
	for (;;) {
		if (redisGetReplyFromReader(c, reply) != REDIS_OK)
			goto fail;
		if (*reply != NULL)
			return REDIS_OK;
		if (dnsnap__l2_reader_full(c->reader))
			goto fail;
		if (redisBufferRead(c) != REDIS_OK)
			goto fail;
	}
fail:
	*reply = NULL;
	why = dnsnap__l2_reader_over(c->reader, b);
	if (why != NULL)
		snprintf(err, errcap, "a reply over the bounds: %s", why);
	else
		snprintf(err, errcap, "%s", c->err ? c->errstr : "no reply");
	return REDIS_ERR;
}
