// model.h: a dense or MoE decoder-only transformer, and what it costs per token.
// Parameter counts follow the weight shapes of Megatron-Core / Hugging Face implementations
// (GQA attention, optional SwiGLU MLP, optional DeepSeek MLA, routed + shared experts).
// Model FLOPs follow Narayanan et al. 2021 (arXiv:2104.04473) §5.1 as generalised in
// Megatron-LM training.py num_floating_point_operations (GQA, gated MLP, MoE top-k).
// MTP modules (DeepSeek-V3 §2.2) are counted apart (ParamCounts::mtp) and in the FLOPs.
// Ignores: biases, learned position embeddings.
#pragma once
#include <string>

namespace cutlab {

struct ModelSpec {
  std::string name;
  int layers = 0;          // L, transformer blocks
  int hidden = 0;          // h
  int heads = 0;           // a, query heads
  int kv_heads = 0;        // g, key/value heads (GQA; = heads for MHA)
  int head_dim = 0;        // d_head (for MLA: the non-rotary q/k head dim, qk_nope_head_dim)
  int ffn_hidden = 0;      // f, dense MLP hidden size
  bool gated_mlp = false;  // SwiGLU: three matrices (gate, up, down)
  int vocab = 0;           // V
  bool tied_embeddings = false;
  bool dropout = false;  // stores dropout masks (GPT, Megatron paper models); Llama: none
  // MoE (experts = 0: dense model)
  int experts = 0;            // routed experts per MoE layer
  int top_k = 0;              // routed experts per token
  int shared_experts = 0;     // always-active experts, each expert_ffn_hidden wide
  int expert_ffn_hidden = 0;  // f_e
  int dense_layers = 0;       // leading dense layers (DeepSeek-V3: 3)
  // Interleaved MoE (Llama 4 Maverick; Hugging Face Llama4TextConfig interleave_moe_layer_step): after
  // the dense_layers, layer i (0-based) has experts when (i + 1) % moe_layer_step == 0 and a dense
  // MLP of ffn_hidden otherwise (Maverick: 2, layers 1, 3, …, 47). 1: every layer after dense_layers.
  int moe_layer_step = 1;
  // Node-limited routing (DeepSeek-V3 §2.1.2; config.json n_group, topk_group): the routed experts
  // form route_groups equal groups and each token's top_k experts come from its best
  // route_group_limit groups. 0: unrestricted.
  int route_groups = 0;
  int route_group_limit = 0;
  // MLA (DeepSeek-V2/V3 multi-head latent attention; kv_lora_rank = 0: ordinary attention)
  int q_lora_rank = 0;  // 0: queries projected directly
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  // Multi-token prediction (DeepSeek-V3 §2.2; config.json num_nextn_predict_layers): modules after the
  // last layer, each one transformer block (an MoE block when the model is MoE), an h×2h projection
  // of [norm(h); norm(embedding of the next token)] and two norms, sharing the embedding and the
  // output layer; they run on the last pipeline stage (Megatron-Core mtp_num_layers).
  int mtp_layers = 0;
  // Local attention (attended_tokens): attention_window > 0 limits the keys of a query in the local
  // layers to a window of that many tokens, either a sliding window of the last W tokens (gpt-oss
  // sliding_window 128; Mistral) or, with attention_chunked, the tokens of the query's own chunk of W
  // (Llama 4 attention_chunk_size 8192). global_attention_every = n > 0: layers n − 1, 2n − 1, …
  // (0-based) attend to every token (gpt-oss 2: layer_types alternate sliding and full, sliding
  // first; Llama 4 4: the NoPE layers of no_rope_layer_interval 4); 0: every layer is local.
  int attention_window = 0;
  bool attention_chunked = false;
  int global_attention_every = 0;
};

bool is_moe(const ModelSpec& m);
bool is_mla(const ModelSpec& m);
int moe_layer_count(const ModelSpec& m);    // layers with experts
int dense_layer_count(const ModelSpec& m);  // layers with a dense MLP
// Whether layer i (0-based) has experts (dense_layers, moe_layer_step), and how many of the layers
// first..last (inclusive) do.
bool is_moe_layer(const ModelSpec& m, int i);
int moe_layers_between(const ModelSpec& m, int first, int last);

// Keys a query attends to in layer i (0-based) when its context (itself and the tokens before it)
// holds `context` tokens: all of them in a global layer; min(context, W) in a sliding-window layer;
// the tokens of its own chunk, context − W·⌊(context − 1)/W⌋, in a chunked layer (attention_window,
// attention_chunked, global_attention_every). The one place that knows which tokens a layer sees.
double attended_tokens(const ModelSpec& m, int i, double context);
// The same for a local layer (every local layer attends alike), and the global layers among layers
// first..last (0-based; all of them without attention_window).
double local_attended_tokens(const ModelSpec& m, double context);
int global_attention_layers(const ModelSpec& m, int first, int last);
// Share of the layers whose attention is local (0 without attention_window), and the (query, key)
// pairs of a causal local layer over a sequence of s tokens, in the continuous form of the causal
// s²/2: sliding window W·s − W²/2 for s > W; chunked ⌊s/W⌋·W²/2 + r²/2 (r the last chunk's tokens);
// s²/2 when s ≤ W. Training attention FLOPs (core/ops.cpp attention_ops) scale by it.
double local_attention_share(const ModelSpec& m);
double local_attention_pairs(const ModelSpec& m, double s);

// Parameter counts of one block's parts (not sharded).
struct LayerParams {
  double attention = 0;       // projections (Q, K, V, O, or MLA's down/up projections)
  double kv_projections = 0;  // of which the K and V projections of GQA/MHA (h·g·d each)
  double norms = 0;           // RMSNorm/LayerNorm weights of the block
  double dense_mlp = 0;       // dense MLP (0 in MoE layers)
  double router = 0;          // h x E gate (MoE layers)
  double routed_expert = 0;   // one routed expert
  double shared_experts = 0;  // all shared experts together
};
LayerParams dense_layer_params(const ModelSpec& m);
// Attention weights one GPU holds at tensor parallel `tp`: Q and O split tp ways; K and V split
// min(tp, g) ways, replicated tp/g times when tp exceeds the KV heads (vLLM QKVParallelLinear,
// num_kv_head_replicas = tp / g; MLA's latent projections split tp ways as the heads).
LayerParams moe_layer_params(const ModelSpec& m);
double attention_params_per_gpu(const LayerParams& p, const ModelSpec& m, double tp);

struct ParamCounts {
  double total = 0;      // every weight
  double active = 0;     // weights touched per token (top-k routed + shared experts)
  double embedding = 0;  // input embedding V x h
  double output = 0;     // output layer V x h (0 if tied)
  double attention = 0;  // all layers
  double dense_mlp = 0;  // all dense MLPs
  double experts = 0;    // all routed + shared experts and routers
  double mtp = 0;        // multi-token prediction modules (not in total, as DeepSeek-V3 reports 671B)
};
ParamCounts count_params(const ModelSpec& m);

// Query and value widths a·d_head; MLA uses qk_nope + qk_rope for q/k and v_head_dim for v.
double qk_head_dim(const ModelSpec& m);
double v_head_dim_of(const ModelSpec& m);

// Model FLOPs of one training step over `sequences` sequences of seq_len tokens (forward +
// backward, no recompute): 6·tokens·(active matmul params incl. the output layer) +
// 6·B·s²·L·a·(d_qk + d_v) for the attention scores and values. For GPT shapes this is
// 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)) (Narayanan et al. 2021, eq. in §5.1 without recompute).
double model_flops_per_step(const ModelSpec& m, double sequences, double seq_len);

// Matmul FLOPs of one forward pass per token (2 per active weight, excluding the embedding lookup),
// and attention-score FLOPs of one forward pass per sequence (QK^T and AV, full s², as Megatron counts).
double forward_matmul_flops_per_token(const ModelSpec& m);
double forward_attention_flops_per_sequence(const ModelSpec& m, double seq_len);

// torchtitan's per-op selective activation checkpointing (recompute "op_sac"; torchtitan
// parallelisms/parallelize_llama.py @ 9dec370, _custom_policy: "Saves output of all compute ops,
// except every second mm"): of a dense layer's matmuls in forward order (Q, K, V, O, then gate, up,
// down, or up, down without gating) the 2nd, 4th and 6th are recomputed: K, O and h·f. Returns their
// share of the layer's forward matmul FLOPs (Llama 3 8B: 0.365).
double op_sac_recomputed_matmul_fraction(const ModelSpec& m);

}  // namespace cutlab
