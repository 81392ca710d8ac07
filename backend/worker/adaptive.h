/*
 * adaptive.h: lr.schedule adaptive.  The gradient noise scale (McCandlish
 * et al., "An Empirical Model of Large-Batch Training", appendix A) is
 * estimated each step from the ranks' own gradients (batch b each) against
 * the aggregate (batch B = world * b):
 *
 *   |G|^2 ~ (B |g_B|^2 - b |g_b|^2) / (B - b)
 *   S     ~ (|g_b|^2 - |g_B|^2) / (1/b - 1/B)      noise scale = S / |G|^2
 *
 * smoothed by exponential moving averages.  The learning rate is the cosine
 * schedule times an AdaScale-style gain r / s, with s = world and
 * r = (S/b + |G|^2) / (S/(b s) + |G|^2) in [1, s]: the full rate while the
 * gradient noise dominates, less while the batch is larger than the noise
 * needs.  With one rank nothing can be estimated and the gain stays 1.
 */
#ifndef HUNTER_ADAPTIVE_H
#define HUNTER_ADAPTIVE_H

struct adascale {
	double	 ema_g2, ema_s;		/* bias-corrected below */
	double	 weight;		/* sum of EMA weights so far */
	double	 gain;			/* r / s, in [1/s, 1] */
	double	 noise_scale;		/* S / |G|^2, in samples; < 0 unknown */
};

void	adascale_init(struct adascale *);
/* One step's norms: g2_small the mean over ranks of |g_b|^2, g2_big the
 * aggregate's |g_B|^2.  Returns the gain. */
double	adascale_update(struct adascale *, double g2_small, double g2_big,
	    int b, int world);

#endif
