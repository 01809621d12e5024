#include <catch2/catch.hpp>

#include <algorithm>

#include "core/plan.h"
#include "core/presets.h"
#include "tests/helpers.h"

using namespace cutlab;

namespace {
bool has_error(const Errors& errors, const std::string& path) {
  return std::any_of(errors.begin(), errors.end(), [&](const Error& e) { return e.path == path; });
}
Errors check(const Config& c) { return validate(c.model, c.cluster, c.plan, c.workload); }
}  // namespace

TEST_CASE("a valid plan has no errors", "[plan]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
  REQUIRE(check(c).empty());
}

TEST_CASE("each broken rule is reported at its JSON path", "[plan]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
  SECTION("tp must divide the heads") {
    c.plan.tp = 3;
    REQUIRE(has_error(check(c), "/plan/tp"));
  }
  SECTION("ep needs experts") {
    c.plan.ep = 2;
    REQUIRE(has_error(check(c), "/plan/ep"));
  }
  SECTION("pp cannot exceed layers") {
    c.plan.pp = 81;
    REQUIRE(has_error(check(c), "/plan/pp"));
  }
  SECTION("vpp needs the interleaved schedule, and enough layers") {
    c.plan.vpp = 2;
    REQUIRE(has_error(check(c), "/plan/vpp"));
    c.plan.schedule = Schedule::Interleaved;
    REQUIRE(check(c).empty());
    c.plan.vpp = 41;
    REQUIRE(has_error(check(c), "/plan/vpp"));
  }
  SECTION("global batch = micro batch × micro-batches × DP") {
    c.workload.global_batch = 66;
    REQUIRE(has_error(check(c), "/workload/global_batch"));
  }
  SECTION("cp must split the sequence into 2·cp chunks") {
    c.plan.cp = 3;
    REQUIRE(has_error(check(c), "/plan/cp"));
  }
  SECTION("cluster.gpus must equal the mesh") {
    c.cluster.gpus = 128;
    REQUIRE(has_error(check(c), "/cluster/gpus"));
  }
  SECTION("zero, negative and absurd values") {
    c.plan.dp = 0;
    c.model.hidden = -1;
    c.workload.seq_len = 1 << 30;
    c.cluster.efficiency.gemm = 1.5;
    c.cluster.efficiency.serving_rank_cv = -0.1;
    const Errors e = check(c);
    REQUIRE(has_error(e, "/plan/dp"));
    REQUIRE(has_error(e, "/model/hidden"));
    REQUIRE(has_error(e, "/workload/seq_len"));
    REQUIRE(has_error(e, "/cluster/efficiency/gemm"));
    REQUIRE(has_error(e, "/cluster/efficiency/serving_rank_cv"));
  }
  SECTION("the name of the link inside a node: 1 to 24 bytes, no control characters") {
    c.cluster.node_link = "PCIe";
    REQUIRE(check(c).empty());
    for (const std::string& bad : {std::string(), std::string(25, 'x'), std::string("NV\nLink")}) {
      c.cluster.node_link = bad;
      REQUIRE(has_error(check(c), "/cluster/node_link"));
    }
  }
  SECTION("a rank order that is not a permutation") {
    c.plan.rank_order = "tp-pp-dp";
    REQUIRE(has_error(check(c), "/plan/rank_order"));
  }
}

TEST_CASE("every error is reported at once", "[plan]") {
  Config c = test::config("llama3-70b", "dgx-h100", 3, 100, 4, 8191, 63);
  const Errors e = check(c);
  REQUIRE(has_error(e, "/plan/tp"));
  REQUIRE(has_error(e, "/plan/pp"));
  REQUIRE(has_error(e, "/workload/global_batch"));
  REQUIRE(e.size() >= 3);
}

TEST_CASE("MoE rules: ep divides experts, folding fits etp × ep in a stage", "[plan]") {
  Config c = test::config("mixtral-8x22b", "dgx-h100", 2, 8, 8, 4096, 256);
  c.plan.sp = true;  // EP with TP > 1 needs it
  c.plan.ep = 3;
  REQUIRE(has_error(check(c), "/plan/ep"));
  c.plan.ep = 8;
  c.plan.etp = 1;  // folding: GPUs = tp·cp·dp·pp = 128; experts 1 × 8 × 2 × 8
  REQUIRE(check(c).empty());
  c.plan.dp = 2;  // stage has tp·dp = 4 GPUs < etp·ep = 8
  c.workload.global_batch = 64;
  REQUIRE(has_error(check(c), "/plan/ep"));
}

TEST_CASE("interleaved MoE and local attention are checked at their paths", "[plan]") {
  Config c = test::config("llama4-maverick-17b-128e", "dgx-h100", 8, 1, 1, 4096, 8);
  REQUIRE(check(c).empty());
  c.model.moe_layer_step = 0;
  REQUIRE(has_error(check(c), "/model/moe_layer_step"));
  c.model.moe_layer_step = 49;  // more than the 48 layers
  REQUIRE(has_error(check(c), "/model/moe_layer_step"));
  c.model.moe_layer_step = 2;
  c.model.attention_window = -1;
  REQUIRE(has_error(check(c), "/model/attention_window"));
  c.model.attention_window = 0;  // chunked and global layers without a window
  REQUIRE(has_error(check(c), "/model/attention_chunked"));
  c.model.attention_chunked = false;
  REQUIRE(has_error(check(c), "/model/global_attention_every"));
  Config dense = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 4096, 8);
  dense.model.moe_layer_step = 2;
  REQUIRE(has_error(check(dense), "/model/moe_layer_step"));
}

TEST_CASE("uneven pipelines take the shortfall from the first and last stages", "[plan]") {
  // Llama 3 (arXiv:2407.21783 §3.3.2): 126 layers on 16 stages, one fewer on the first and last.
  const ModelSpec m = *find_model_preset("llama3-405b");
  Plan plan;
  plan.pp = 16;
  const std::vector<int> layers = stage_layers(m, plan);
  REQUIRE(layers.front() == 7);
  REQUIRE(layers.back() == 7);
  REQUIRE(std::count(layers.begin(), layers.end(), 8) == 14);
  plan.pp = 2;
  REQUIRE(stage_layers(*find_model_preset("llama3-70b"), plan) == std::vector<int>{40, 40});
}

TEST_CASE("an explicit layer split must cover the model", "[plan]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
  c.plan.layers_per_stage = {39, 41};
  REQUIRE(check(c).empty());
  c.plan.layers_per_stage = {39, 40};
  REQUIRE(has_error(check(c), "/plan/layers_per_stage"));
}

TEST_CASE("the derived mesh counts replicas, expert groups and micro-batches", "[plan]") {
  Plan p;
  p.tp = 1, p.pp = 16, p.ep = 64, p.dp = 2;
  Workload w;
  w.global_batch = 1920;
  const Mesh m = derive_mesh(p, w);
  REQUIRE(m.gpus == 2048);
  REQUIRE(m.dp_attn == 128);
  REQUIRE(m.edp == 2);
  REQUIRE(m.num_micro_batches == 15);
}

TEST_CASE("expert parallel with tensor parallel needs sequence parallel in training", "[plan]") {
  // Megatron-LM refuses EP > 1 with TP > 1 unless --sequence-parallel is set.
  Config c = test::config("mixtral-8x22b", "dgx-h100", 2, 1, 1, 4096, 64);
  c.plan.ep = 8;
  REQUIRE(has_error(check(c), "/plan/sp"));
  c.plan.sp = true;
  REQUIRE_FALSE(has_error(check(c), "/plan/sp"));
  c.plan.sp = false;
  c.workload.mode = Mode::Infer;  // serving engines have no such rule
  REQUIRE_FALSE(has_error(check(c), "/plan/sp"));
}

TEST_CASE("node-limited routing: groups divide the experts and the limit fits in them", "[plan]") {
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 15360);
  c.plan.ep = 64;
  REQUIRE(c.model.route_groups == 8);
  REQUIRE(c.model.route_group_limit == 4);
  REQUIRE(check(c).empty());
  SECTION("the limit cannot exceed the groups") {
    c.model.route_group_limit = 9;
    REQUIRE(has_error(check(c), "/model/route_group_limit"));
  }
  SECTION("the groups divide the experts") {
    c.model.route_groups = 7;
    REQUIRE(has_error(check(c), "/model/route_groups"));
  }
  SECTION("the chosen groups hold top_k experts: 1 group of 256/128 = 2 < 8") {
    c.model.route_groups = 128;
    c.model.route_group_limit = 1;
    REQUIRE(has_error(check(c), "/model/route_group_limit"));
  }
  SECTION("a limit needs groups; negative values are refused") {
    c.model.route_groups = 0;
    REQUIRE(has_error(check(c), "/model/route_group_limit"));
    c.model.route_groups = -1;
    REQUIRE(has_error(check(c), "/model/route_groups"));
  }
}

TEST_CASE("fp8 dispatch needs fp8 training", "[plan]") {
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 15360);
  c.plan.ep = 64;
  c.plan.ep_dispatch_dtype = EpDispatchDtype::FP8;
  REQUIRE(has_error(check(c), "/plan/ep_dispatch_dtype"));  // workload.dtype bf16
  c.workload.dtype = Dtype::FP8;
  REQUIRE(check(c).empty());
}

TEST_CASE("the embedding and the loss count as pipeline layers when the plan says so", "[plan]") {
  // Megatron-Core get_num_layers_to_build: (L + 1 + 1)/(pp·vpp) layers per virtual stage, one fewer
  // in the first (embedding) and the last (loss). Llama 3 405B, PP 16: (126 + 2)/16 = 8 per stage,
  // 7 on the first and the last: the same counts as the shortfall rule.
  const ModelSpec m = *find_model_preset("llama3-405b");
  Plan plan;
  plan.pp = 16;
  plan.embedding_in_pipeline_split = plan.loss_in_pipeline_split = true;
  REQUIRE(pipeline_split_layers(m, plan) == 128);
  std::vector<int> expected(16, 8);
  expected.front() = expected.back() = 7;
  REQUIRE(stage_layers(m, plan) == expected);
  // PP 16 × VP 8 (Megatron-Bridge's Llama 3.1 405B GB200 recipe): 128/128 = 1 layer per virtual
  // stage; virtual stage 0 (the embedding) and 127 (the loss) build none.
  plan.vpp = 8;
  plan.schedule = Schedule::Interleaved;
  const std::vector<int> vl = virtual_stage_layers(m, plan);
  REQUIRE(vl.size() == 128);
  REQUIRE(vl.front() == 0);
  REQUIRE(vl.back() == 0);
  REQUIRE(std::count(vl.begin(), vl.end(), 1) == 126);
  // Only the embedding counted on PP 2: 126 + 1 = 127 does not divide by 2.
  Config c = test::config("llama3-405b", "dgx-h100", 8, 2, 1, 8192, 64);
  c.plan.embedding_in_pipeline_split = true;
  REQUIRE(has_error(check(c), "/plan/pp"));
  c.plan.loss_in_pipeline_split = true;  // 128/2 = 64: embedding + 63, 63 + loss
  REQUIRE(check(c).empty());
  REQUIRE(stage_layers(c.model, c.plan) == std::vector<int>{63, 63});
}

TEST_CASE("126 layers on 128 model chunks need the embedding and the loss counted", "[plan]") {
  // Llama 3 405B, TP 4 × PP 16 × VP 8 on 2,048 GB200 (DP 32): 16 × 8 = 128 chunks > 126 layers.
  Config c = test::config("llama3-405b", "gb200-nvl72", 4, 16, 32, 8192, 2048);
  c.plan.vpp = 8;
  c.plan.schedule = Schedule::Interleaved;
  c.plan.sp = true;
  const Errors without = check(c);
  REQUIRE(without.size() == 1);
  REQUIRE(without[0].path == "/plan/vpp");
  REQUIRE(without[0].message.find("plan.embedding_in_pipeline_split and plan.loss_in_pipeline_split") != std::string::npos);
  c.plan.embedding_in_pipeline_split = c.plan.loss_in_pipeline_split = true;
  REQUIRE(check(c).empty());
}

TEST_CASE("broken pipeline-split and ZeRO rules are all listed at once", "[plan]") {
  // Llama 3 70B (80 layers), PP 4 × VP 3 with the embedding and the loss counted: 82 layers do not
  // divide into 12 chunks; layers_per_stage cannot be combined with the options; ZeRO-3 with PP.
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 2, 8192, 64);
  c.plan.vpp = 3;
  c.plan.schedule = Schedule::Interleaved;
  c.plan.embedding_in_pipeline_split = c.plan.loss_in_pipeline_split = true;
  c.plan.layers_per_stage = {20, 20, 20, 20};
  c.plan.zero = 3;
  const Errors e = check(c);
  REQUIRE(e.size() == 3);
  REQUIRE(has_error(e, "/plan/vpp"));
  REQUIRE(has_error(e, "/plan/layers_per_stage"));
  REQUIRE(has_error(e, "/plan/zero"));
}

TEST_CASE("ZeRO-2 and ZeRO-3 are refused with pipeline parallelism", "[plan]") {
  // DeepSpeed pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism".
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
  for (int zero : {2, 3}) {
    c.plan.zero = zero;
    const Errors e = check(c);
    REQUIRE(e.size() == 1);
    REQUIRE(e[0].path == "/plan/zero");
    REQUIRE(e[0].code == ErrorCode::Incompatible);
  }
  c.plan.zero = 1;  // ZeRO-1 (Megatron's distributed optimizer) runs with PP
  REQUIRE(check(c).empty());
  c.plan.zero = 3;
  c.plan.pp = 1, c.plan.dp = 8;  // FSDP without PP
  REQUIRE(check(c).empty());
  c.plan.pp = 2, c.plan.dp = 4;
  c.workload.mode = Mode::Infer;  // serving holds no optimizer state: no rule
  REQUIRE_FALSE(has_error(check(c), "/plan/zero"));
}

TEST_CASE("the routing load of an MoE plan: capacity factor, padding, imbalance, shared-expert overlap", "[plan]") {
  // Mixtral 8x22B (8 experts, top-2, no shared expert) at EP 8.
  Config c = test::config("mixtral-8x22b", "dgx-h100", 1, 1, 1, 4096, 64);
  c.plan.ep = 8;
  REQUIRE(check(c).empty());
  SECTION("valid values") {
    c.plan.moe_capacity_factor = 1.25;
    c.plan.moe_pad_to_capacity = true;
    c.plan.moe_imbalance = 1.3;
    REQUIRE(check(c).empty());
  }
  SECTION("a negative capacity factor") {
    c.plan.moe_capacity_factor = -1;
    REQUIRE(has_error(check(c), "/plan/moe_capacity_factor"));
  }
  SECTION("a capacity above every token: cf > experts / top_k = 4") {
    c.plan.moe_capacity_factor = 4.5;
    REQUIRE(has_error(check(c), "/plan/moe_capacity_factor"));
  }
  SECTION("padding needs a capacity factor") {
    c.plan.moe_pad_to_capacity = true;
    REQUIRE(has_error(check(c), "/plan/moe_pad_to_capacity"));
  }
  SECTION("imbalance below 1") {
    c.plan.moe_imbalance = 0.9;
    REQUIRE(has_error(check(c), "/plan/moe_imbalance"));
  }
  SECTION("imbalance above what one rank can receive: ep · min(k, E/ep)/k = 8 · 1/2 = 4") {
    c.plan.moe_imbalance = 4;
    REQUIRE(check(c).empty());
    c.plan.moe_imbalance = 4.5;
    REQUIRE(has_error(check(c), "/plan/moe_imbalance"));
    c.plan.moe_imbalance = 1.2;  // one EP rank holds every expert: nothing to be hotter than
    c.plan.ep = 1;
    c.plan.dp = 1;
    REQUIRE(has_error(check(c), "/plan/moe_imbalance"));
  }
  SECTION("shared-expert overlap needs a shared expert") {
    c.plan.moe_shared_expert_overlap = true;
    REQUIRE(has_error(check(c), "/plan/moe_shared_expert_overlap"));
    Config q = test::config("qwen2-57b-a14b", "dgx-h100", 1, 1, 1, 4096, 64);
    q.plan.ep = 8;
    q.plan.moe_shared_expert_overlap = true;
    REQUIRE(check(q).empty());
  }
  SECTION("a dense model has no routing to load") {
    Config d = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
    d.plan.moe_imbalance = 1.2;
    d.plan.moe_capacity_factor = 1;
    d.plan.moe_pad_to_capacity = true;
    d.plan.moe_shared_expert_overlap = true;
    const Errors e = check(d);
    for (const char* key : {"moe_imbalance", "moe_capacity_factor", "moe_pad_to_capacity", "moe_shared_expert_overlap"})
      REQUIRE(has_error(e, std::string("/plan/") + key));
  }
  SECTION("serving refuses them") {
    c.workload.mode = Mode::Infer;
    c.plan.moe_capacity_factor = 1.25;
    REQUIRE(has_error(check(c), "/plan/moe_capacity_factor"));
  }
}

TEST_CASE("moe_load: dropless imbalance, padded capacity, capacity capping the imbalance", "[plan]") {
  Plan p;
  REQUIRE((moe_load(p).recv == 1 && moe_load(p).send == 1));
  p.moe_imbalance = 1.4;
  REQUIRE((moe_load(p).recv == 1.4 && moe_load(p).send == 1));
  p.moe_capacity_factor = 1.25;
  REQUIRE((moe_load(p).recv == 1.25 && moe_load(p).send == 1));  // copies above capacity drop
  p.moe_capacity_factor = 0.8;
  REQUIRE((moe_load(p).recv == 0.8 && moe_load(p).send == 0.8));  // below 1 even a balanced rank drops
  p.moe_pad_to_capacity = true;
  p.moe_capacity_factor = 1.5;
  REQUIRE((moe_load(p).recv == 1.5 && moe_load(p).send == 1.5));  // padded: exactly the capacity, sent and received
}
