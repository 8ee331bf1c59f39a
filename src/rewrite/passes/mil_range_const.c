/* SPDX-License-Identifier: MIT */
/* mil_range_const.c: mil-range-to-const (a row of AL_PASSES in surgery.c; docs/surgery.md;
 * tests/pass_mil_range_to_const.sh).
 *   match:   range_1d whose start, end and step are immediate constants, the result exact in its
 *            dtype (fp16 / fp32 / int32, at most 2^24 values)
 *   rewrite: a const op of the same values under the same output name (a new weight.bin blob when
 *            >= 10 fp values, else immediate)
 *   proves:  exact: the values are start + i * step, each exact in the output dtype, as every
 *            implementation computes them */
#include "passes.h"

#include <math.h>
#include <stdio.h>

bool ali_pass_mil_range(struct al_mil_pass *c)
{
	if (!ali_mil_op_ok(c))
		return false;
	double v[3];
	static const char *const nm[3] = {"start", "end", "step"};
	for (int i = 0; i < 3; i++)
		if (!ali_mil_const_scalar(c, nm[i], &v[i], false, 0))
			return false;
	if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
		return ali_mil_say(c, "range_1d(%g, %g, %g) is not a finite range", v[0], v[1], v[2]);
	int dt = ali_mil_out_dtype(c);
	if (!ali_mil_dtype_ok(c, dt) || dt == AL_DT_BOOL)
		return dt == AL_DT_BOOL ? ali_mil_say(c, "a bool range") : false;
	double cnt = ceil((v[1] - v[0]) / v[2]);
	if (cnt < 0)
		cnt = 0;
	if (cnt > ALI_MIL_MAX_CONST_ELEMS)
		return ali_mil_say(c, "%g values: too large to fold", cnt);
	int64_t n = (int64_t)cnt;
	double *x = ali_malloc((size_t)n * sizeof *x + 1);
	if (!x)
		return ali_mil_say(c, "out of memory");
	for (int64_t i = 0; i < n; i++) {
		/* the MIL definition start + i * step, which must be exact in the
		 * output dtype (so that no implementation can round it otherwise);
		 * integers up to 2^24, where the fp32 interpreter holds them exactly */
		x[i] = v[0] + (double)i * v[2];
		if (!ali_mil_exact_in(dt, x[i]) || (dt == AL_DT_INT32 && fabs(x[i]) > 16777216.0)) {
			double bad = x[i];
			ali_free(x);
			return ali_mil_say(c, "value %lld (%.9g) is not exact in %s", (long long)i, bad,
				   al_dtype_name(dt));
		}
	}
	bool ok = ali_mil_fold_to_const(c, dt, 1, &n, x, (size_t)n);
	ali_free(x);
	return ok;
}
