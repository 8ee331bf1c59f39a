/* SPDX-License-Identifier: MIT */
/* span_num.c: numbers read from a span of a mapped file or a caller's buffer.
 * strtoull and friends read until a byte that is not part of the number: on a
 * mapping that ends in digits that is past its end (a fault when the next page
 * is unmapped; ASan cannot see it), and sscanf reads to a NUL first. These stop
 * at n, always. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

size_t ali_span_u64(const char *s, size_t n, uint64_t max, uint64_t *v)
{
	size_t k = 0;
	uint64_t x = 0;
	bool over = false;
	for (; k < n && s[k] >= '0' && s[k] <= '9'; k++) {
		unsigned dgt = (unsigned)(s[k] - '0');
		if (dgt > max || x > (max - dgt) / 10)
			over = true; /* keep counting: the caller learns where it ends */
		else
			x = x * 10 + dgt;
	}
	if (k == 0 || over)
		return 0;
	*v = x;
	return k;
}

size_t ali_span_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *v)
{
	if (n == 0 || min > max)
		return 0;
	bool neg = s[0] == '-';
	size_t sign = s[0] == '-' || s[0] == '+';
	/* the magnitude's bound: |min| for negatives (INT64_MIN's too), max otherwise */
	uint64_t bound = neg ? (min >= 0 ? 0 : (uint64_t)(-(min + 1)) + 1) : (max < 0 ? 0 : (uint64_t)max);
	uint64_t mag;
	size_t k = ali_span_u64(s + sign, n - sign, bound, &mag);
	if (k == 0)
		return 0;
	int64_t x = neg ? (mag == 0 ? 0 : -(int64_t)(mag - 1) - 1) : (int64_t)mag;
	if (x < min || x > max)
		return 0;
	*v = x;
	return sign + k;
}

size_t ali_span_double(const char *s, size_t n, double *v)
{
	char buf[AL_SPAN_NUM_MAX + 1];
	size_t k = n < AL_SPAN_NUM_MAX ? n : AL_SPAN_NUM_MAX;
	memcpy(buf, s, k);
	buf[k] = '\0';
	if (k == 0 || buf[0] == ' ' || (buf[0] >= '\t' && buf[0] <= '\r'))
		return 0; /* strtod would skip blanks: a number starts at s */
	char *end;
	double x = strtod(buf, &end);
	size_t used = (size_t)(end - buf);
	if (used == 0 || (used == k && k < n))
		return 0; /* none, or longer than the copy: refused, not cut */
	*v = x;
	return used;
}
