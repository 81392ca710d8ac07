/*
 * adaptive.c: the noise-scale estimate and the AdaScale gain (adaptive.h).
 */
#include "backend/worker/adaptive.h"

/* Smoothing of the two estimates: about the last 100 steps. */
#define ADASCALE_BETA 0.99

void
adascale_init(struct adascale *a)
{
	a->ema_g2 = a->ema_s = a->weight = 0;
	a->gain = 1;
	a->noise_scale = -1;
}

double
adascale_update(struct adascale *a, double g2_small, double g2_big, int b,
    int world)
{
	double	 B = (double)b * world, g2, s, mu2, sigma2, r;

	if (world < 2 || b <= 0)
		return a->gain = 1;
	g2 = (B * g2_big - b * g2_small) / (B - b);
	s = (g2_small - g2_big) / (1.0 / b - 1.0 / B);
	a->ema_g2 = ADASCALE_BETA * a->ema_g2 + (1 - ADASCALE_BETA) * g2;
	a->ema_s = ADASCALE_BETA * a->ema_s + (1 - ADASCALE_BETA) * s;
	a->weight = ADASCALE_BETA * a->weight + (1 - ADASCALE_BETA);
	mu2 = a->ema_g2 / a->weight;
	sigma2 = a->ema_s / a->weight / b;
	if (mu2 <= 0 || sigma2 < 0) {		/* too noisy yet to tell */
		a->noise_scale = -1;
		return a->gain = 1;
	}
	a->noise_scale = sigma2 * b / mu2;
	r = (sigma2 + mu2) / (sigma2 / world + mu2);
	if (r < 1)
		r = 1;
	if (r > world)
		r = world;
	return a->gain = r / world;
}
