/*
 * model-gpt.c: a decoder-only transformer with GPT-2's architecture:
 * token embedding plus learned positions; model.layers pre-LayerNorm
 * blocks, each causal multi-head self-attention (one fused QKV projection
 * and an output projection) and an MLP of 4C with GELU, both around a
 * residual add; a final LayerNorm; the output head tied to the token
 * embedding.  The layers are named as GPT-2's tensors are (h.N.ln_1,
 * h.N.attn.c_attn, ..., ln_f), so a checkpoint loads in the PyTorch
 * ecosystem as it is.  Initialisation is GPT-2's: normal of deviation
 * 0.02, the two residual projections of each block 0.02 / sqrt(2 L).
 * Weight decay leaves out what GPT-2's training leaves out: biases,
 * LayerNorm and the embeddings.
 *
 * The model's input is T tokens (m->in_c) and its classes the vocabulary.
 */
#include <math.h>
#include <stdio.h>

#include "backend/worker/model.h"

/*
 * One block on the residual stream x; returns the stream after it.  The
 * branches end in projections that add onto the stream (layer-proj.c's
 * residual epilogue), and the MLP's first projection takes its GELU.
 */
static int
gpt_block(struct model *m, int i, int x, int C, int H, float rstd)
{
	char	 n[LAYER_NAME_MAX];
	int	 a, r;

	snprintf(n, sizeof n, "h.%d.ln_1", i);
	model_add(m, &layer_layernorm, n, &(struct layer_args){
	    .n_src = 1, .src = { x } });
	snprintf(n, sizeof n, "h.%d.attn.c_attn", i);
	model_add(m, &layer_proj, n, &(struct layer_args){ .out = 3 * C });
	snprintf(n, sizeof n, "h.%d.attn", i);
	a = model_add(m, &layer_attention, n, &(struct layer_args){
	    .heads = H });
	snprintf(n, sizeof n, "h.%d.attn.c_proj", i);
	r = model_add(m, &layer_proj, n, &(struct layer_args){ .out = C,
	    .std = rstd, .n_src = 2, .src = { a, x } });
	snprintf(n, sizeof n, "h.%d.ln_2", i);
	model_add(m, &layer_layernorm, n, NULL);
	snprintf(n, sizeof n, "h.%d.mlp.c_fc", i);
	a = model_add(m, &layer_proj, n, &(struct layer_args){ .out = 4 * C,
	    .gelu = 1 });
	snprintf(n, sizeof n, "h.%d.mlp.c_proj", i);
	return model_add(m, &layer_proj, n, &(struct layer_args){ .out = C,
	    .std = rstd, .n_src = 2, .src = { a, r } });
}

static void
gpt_build(struct model *m, const struct job_spec *job)
{
	int	 L = job->model.layers, H = job->model.heads;
	int	 C = job->model.channels[0];
	float	 rstd = 0.02f / sqrtf(2.0f * (float)L);
	int	 x;

	m->loss = MODEL_LOSS_TOKENS;
	x = model_add(m, &layer_embed, "", &(struct layer_args){ .out = C,
	    .vocab = m->classes });
	for (int i = 0; i < L; i++)
		x = gpt_block(m, i, x, C, H, rstd);
	model_add(m, &layer_layernorm, "ln_f", &(struct layer_args){
	    .n_src = 1, .src = { x } });
	model_add(m, &layer_head, "lm_head", NULL);
	for (int i = 0; i < m->n_tensors; i++) {
		struct tensor_info *t = &m->tensors[i];

		t->no_decay = t->ndim < 2 || model_tensor(m, "wte.weight") == t ||
		    model_tensor(m, "wpe.weight") == t;
	}
}

const struct model_type model_gpt = {
	.build = gpt_build,
};
