#include "core/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>

#ifndef __EMSCRIPTEN__
#include <thread>
#endif

#include "core/memory.h"
#include "core/resolved.h"

namespace cutlab {

// Pairs (i, n / i) for i ≤ √n: O(√n) divisions. The page's search calls it for every mesh of a
// part (micro_batches, below): trial division up to n was most of a part's setup at 2,048 GPUs.
std::vector<int> divisors_up_to(long long n, long long limit) {
  std::vector<int> low, high;
  for (long long i = 1; i * i <= n && i <= limit; ++i) {
    if (n % i != 0) continue;
    low.push_back(static_cast<int>(i));
    if (const long long j = n / i; j != i && j <= limit) high.push_back(static_cast<int>(j));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

namespace {

struct ZeroDo {
  int zero = 0;
  bool distributed_optimizer = false;
  bool first = true;  // the first choice of its effective ZeRO stage (the others are the same plan)
};

struct RecomputeChoice {
  Recompute mode = Recompute::None;
  std::vector<RecomputeModule> modules;
};

// The values each searched field takes (one value, the base config's, when the field is fixed).
struct Space {
  std::vector<int> tps, pps, cps, eps, etps;  // etp 0: no folding
  std::vector<Schedule> schedules;
  std::vector<ZeroDo> zero_do;
  std::vector<RecomputeChoice> recomputes;
  std::vector<char> sps, tp_overlaps, grad_overlaps, param_overlaps;
  bool fixed_vpp = false, fixed_mb = false, fixed_dp = false, fixed_sp = false, fixed_tpo = false, fixed_grad = false,
       fixed_param = false, fixed_layers = false;
};

bool fixed(const SearchOptions& o, const char* key) { return std::find(o.fixed.begin(), o.fixed.end(), key) != o.fixed.end(); }

template <class T>
std::vector<T> one_or(const SearchOptions& o, const char* key, T base, std::vector<T> all) {
  return fixed(o, key) ? std::vector<T>{base} : all;
}

Space make_space(const Config& base, const SearchOptions& o) {
  const ModelSpec& m = base.model;
  const Plan& p = base.plan;
  const long long N = base.cluster.gpus;
  Space s;
  s.tps = one_or(o, "tp", p.tp, divisors_up_to(N, std::max(1, m.heads)));
  s.pps = one_or(o, "pp", p.pp, divisors_up_to(N, m.layers));
  s.cps = one_or(o, "cp", p.cp, base.workload.seq_len >= 16384 ? divisors_up_to(N, 32) : std::vector<int>{1});
  s.eps = one_or(o, "ep", p.ep, is_moe(m) ? divisors_up_to(N, m.experts) : std::vector<int>{1});
  s.etps = one_or(o, "etp", p.etp, is_moe(m) ? std::vector<int>{0, 1} : std::vector<int>{0});
  s.schedules = one_or(o, "schedule", p.schedule,
                       {Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1, Schedule::DualPipe, Schedule::GPipe});
  const bool fz = fixed(o, "zero"), fd = fixed(o, "distributed_optimizer");
  bool seen[4] = {false, false, false, false};
  for (int z = 0; z <= 3; ++z)
    for (int d = 0; d <= 1; ++d) {
      if ((fz && z != p.zero) || (fd && d != int(p.distributed_optimizer))) continue;
      const int effective = std::max(z, d);
      s.zero_do.push_back({z, d == 1, !seen[effective]});
      seen[effective] = true;
    }
  using RM = RecomputeModule;
  std::vector<std::vector<RM>> sets{{RM::CoreAttn}};
  if (fixed(o, "recompute_modules")) {
    sets = {p.recompute_modules};
  } else {
    if (moe_layer_count(m) < m.layers) sets.push_back({RM::CoreAttn, RM::Mlp});
    sets.push_back({RM::CoreAttn, RM::LayerNorm});
    if (is_mla(m)) sets.push_back({RM::CoreAttn, RM::MlaUpProj});
    if (is_moe(m)) sets.push_back({RM::CoreAttn, RM::MoeAct}), sets.push_back({RM::CoreAttn, RM::Moe});
    if (is_moe(m) && m.shared_experts > 0) sets.push_back({RM::CoreAttn, RM::SharedExperts});
  }
  for (Recompute r : one_or(o, "recompute", p.recompute, {Recompute::None, Recompute::Selective, Recompute::Full, Recompute::OpSac})) {
    if (r != Recompute::Selective) s.recomputes.push_back({r, p.recompute_modules});
    else
      for (const auto& set : sets) s.recomputes.push_back({r, set});
  }
  const std::vector<char> both{1, 0};  // on first: the dominating choice is enumerated first
  s.fixed_sp = fixed(o, "sp"), s.fixed_tpo = fixed(o, "tp_comm_overlap");
  s.fixed_grad = fixed(o, "overlap_grad_reduce"), s.fixed_param = fixed(o, "overlap_param_gather");
  s.sps = s.fixed_sp ? std::vector<char>{p.sp} : both;
  s.tp_overlaps = s.fixed_tpo ? std::vector<char>{p.tp_comm_overlap} : both;
  s.grad_overlaps = s.fixed_grad ? std::vector<char>{p.overlap_grad_reduce} : both;
  s.param_overlaps = s.fixed_param ? std::vector<char>{p.overlap_param_gather} : both;
  s.fixed_vpp = fixed(o, "vpp"), s.fixed_mb = fixed(o, "micro_batch"), s.fixed_dp = fixed(o, "dp");
  s.fixed_layers = fixed(o, "layers_per_stage");
  return s;
}

// One unit of work: a mesh and a schedule with its VPP; every other field is enumerated inside it.
struct Unit {
  int tp = 1, pp = 1, cp = 1, ep = 1, etp = 0, dp = 1;
  Schedule schedule = Schedule::OneFOneB;
  int vpp = 1;
};

std::vector<Unit> make_units(const Config& base, const Space& s) {
  const long long N = base.cluster.gpus;
  const ModelSpec& m = base.model;
  std::vector<Unit> units;
  for (int tp : s.tps)
    for (int pp : s.pps)
      for (int cp : s.cps)
        for (int ep : s.eps)
          for (int etp : s.etps) {
            // Under folding the experts live inside the attention mesh (GPUs = tp·cp·dp·pp).
            const long long rest = static_cast<long long>(tp) * pp * cp * (etp > 0 ? 1 : ep);
            if (N % rest != 0) continue;  // not a factorisation of the GPU count: not in the space
            if (etp > 0 && ep == 1) continue;
            const int dp = static_cast<int>(N / rest);
            if (s.fixed_dp && dp != base.plan.dp) continue;
            for (Schedule sc : s.schedules) {
              if (pp == 1 && sc != Schedule::OneFOneB && s.schedules.size() > 1) continue;  // no pipeline, no schedule
              std::vector<int> vpps{1};
              if (s.fixed_vpp) vpps = {base.plan.vpp};
              else if (sc == Schedule::Interleaved) {
                vpps.clear();
                for (int v = 2; pp * v <= m.layers; ++v)
                  if (m.layers % (pp * v) == 0) vpps.push_back(v);
              }
              for (int v : vpps) units.push_back({tp, pp, cp, ep, etp, dp, sc, v});
            }
          }
  return units;
}

struct Entry {
  RankedPlan plan;
  long long order = 0;  // enumeration order: breaks ties, so results do not depend on the threads
};

// Fitting plans by throughput; when none fits, the plans closest to fitting.
bool better(const Entry& a, const Entry& b) {
  if (a.plan.fits != b.plan.fits) return a.plan.fits;
  if (a.plan.fits && a.plan.tokens_per_s != b.plan.tokens_per_s) return a.plan.tokens_per_s > b.plan.tokens_per_s;
  if (!a.plan.fits && a.plan.peak_memory_bytes != b.plan.peak_memory_bytes) return a.plan.peak_memory_bytes < b.plan.peak_memory_bytes;
  return a.order < b.order;
}

// The best `top` of what a unit (or the merge) has seen.
struct Best {
  std::size_t top = 10;
  std::vector<Entry> entries;
  void add(Entry e) {
    entries.push_back(std::move(e));
    if (entries.size() >= 4 * top) trim();
  }
  void trim() {
    if (entries.size() <= top) return std::sort(entries.begin(), entries.end(), better);
    std::nth_element(entries.begin(), entries.begin() + static_cast<long>(top), entries.end(), better);
    entries.resize(top);
    std::sort(entries.begin(), entries.end(), better);
  }
};

struct UnitResult {
  SearchResult counts;
  Best best;
};

// The most memory any plan of the unit with this ZeRO choice can use at least: its model states and
// what does not depend on the micro-batches in flight, for the lightest choices (micro-batch 1, no
// recompute, SP when TP > 1). < 0: not known (that representative is not valid).
double memory_floor(Config c) {
  Plan& p = c.plan;
  p.micro_batch = 1, p.recompute = Recompute::None, p.sp = p.tp > 1;
  const Result<Resolved> r = resolve(c);
  if (!r.ok()) return -1;
  const MemoryResult mem = memory_per_stage(r.value, std::vector<double>(static_cast<std::size_t>(p.pp), 0.0));
  double peak = 0;
  for (const StageMemory& s : mem.per_stage) peak = std::max(peak, s.total_bytes);
  return peak;
}

// The micro-batches a unit tries: every divisor of a replica's batch (the base's when fixed; 1 when
// DP does not divide the batch, a unit that is all invalid).
std::vector<int> micro_batches(const Config& base, const Space& s, const Unit& u) {
  const long long gb = base.workload.global_batch;
  if (s.fixed_mb) return {base.plan.micro_batch};
  return gb % u.dp == 0 ? divisors_up_to(gb / u.dp, gb / u.dp) : std::vector<int>{1};
}

// The plans of one item: every SP and overlap flag.
long long plans_per_item(const Space& s) {
  return static_cast<long long>(s.sps.size() * s.tp_overlaps.size() * s.grad_overlaps.size() * s.param_overlaps.size());
}

// A unit's items: one per ZeRO choice × micro-batch × recompute choice, in the enumeration's order
// (cut this fine so that a piece of the search stays short: the plans of one item cost about the
// same); a unit whose DP does not divide the batch is one item.
long long unit_items(const Config& base, const Space& s, const Unit& u) {
  if (base.workload.global_batch % u.dp != 0) return 1;
  return static_cast<long long>(s.zero_do.size()) * static_cast<long long>(micro_batches(base, s, u).size()) *
         static_cast<long long>(s.recomputes.size());
}

// Items [from, to) of unit `u` (the unit_index-th): counts and the best plans into `out`. The order
// of a plan is its position in the unit's enumeration, offset by the unit's own 2^32 numbers (orders
// of different units never meet), whatever range it is searched in.
using Clock = std::chrono::steady_clock;

// Returns the item it stopped before: `to`, or an earlier one once the clock passed `deadline` (the
// first item of the range is always searched).
long long search_unit(const Config& base, const Space& s, const SearchOptions& o, bool memory_prune, const Unit& u,
                      std::size_t unit_index, long long from, long long to, UnitResult& out, const Clock::time_point* deadline) {
  SearchResult& n = out.counts;
  Config c = base;
  Plan& p = c.plan;
  p.tp = u.tp, p.pp = u.pp, p.cp = u.cp, p.ep = u.ep, p.etp = u.etp, p.dp = u.dp;
  p.schedule = u.schedule, p.vpp = u.vpp;
  if (!s.fixed_layers) p.layers_per_stage.clear();
  const std::vector<int> mbs = micro_batches(base, s, u);
  const long long per_item = plans_per_item(s), num_mbs = static_cast<long long>(mbs.size()),
                  num_rc = static_cast<long long>(s.recomputes.size());
  if (base.workload.global_batch % u.dp != 0) {
    const long long all = from < to ? per_item * num_rc * num_mbs * static_cast<long long>(s.zero_do.size()) : 0;
    n.candidates += all, n.pruned_invalid += all;
    return to;
  }
  const long long order_base = static_cast<long long>(unit_index) << 32;
  long long floor_zero = -1;
  double floor = -1;
  for (long long item = from; item < to; ++item) {
    if (deadline && item > from && Clock::now() >= *deadline) return item;
    const long long zi = item / (num_mbs * num_rc);
    const ZeroDo& zd = s.zero_do[static_cast<std::size_t>(zi)];
    const int mb = mbs[static_cast<std::size_t>(item / num_rc % num_mbs)];
    const RecomputeChoice& rc = s.recomputes[static_cast<std::size_t>(item % num_rc)];
    n.candidates += per_item;
    p.zero = zd.zero, p.distributed_optimizer = zd.distributed_optimizer;
    if (zd.zero >= 2 && u.pp > 1) {  // refused, as DeepSpeed does (plan.cpp)
      n.pruned_invalid += per_item;
      continue;
    }
    if (o.prune && !zd.first) {
      n.pruned_equivalent += per_item;
      continue;
    }
    if (o.prune && memory_prune) {
      if (floor_zero != zi) floor = memory_floor(c), floor_zero = zi;  // the same for every micro-batch and recompute
      if (floor >= 0 && floor > o.max_memory_fraction * (c.cluster.hbm_bytes - c.cluster.reserved_bytes)) {
        n.pruned_memory += per_item;
        continue;
      }
    }
    long long order = order_base + item * per_item;
    for (char sp : s.sps)
      for (char tpo : s.tp_overlaps)
        for (char grad : s.grad_overlaps)
          for (char param : s.param_overlaps) {
            ++order;
            if (sp && u.tp == 1) {  // sequence parallel needs a TP group
              ++n.pruned_invalid;
              continue;
            }
            // Dominated: off never beats on (same memory, time the same or longer), and TP overlap
            // without TP is the same plan.
            const bool dominated = (!s.fixed_tpo && (u.tp == 1 ? tpo : !tpo)) || (!s.fixed_grad && !grad) ||
                                   (!s.fixed_param && !param);
            if (o.prune && dominated) {
              ++n.pruned_equivalent;
              continue;
            }
            p.micro_batch = mb, p.recompute = rc.mode, p.recompute_modules = rc.modules;
            p.sp = sp, p.tp_comm_overlap = tpo, p.overlap_grad_reduce = grad, p.overlap_param_gather = param;
            const Result<Resolved> resolved = resolve(c);
            if (!resolved.ok()) {
              ++n.pruned_invalid;
              continue;
            }
            bool beyond_bound = false;
            const Result<TrainingEstimate> e = o.prune && o.step_bound_s > 0
                                                   ? evaluate_training_within(resolved.value, o.step_bound_s, beyond_bound)
                                                   : evaluate_training(resolved.value, false);
            if (beyond_bound) {
              ++n.pruned_bound;
              continue;
            }
            if (!e.ok()) {
              ++n.pruned_invalid;
              continue;
            }
            ++n.evaluated;
            const StageMemory& peak = e.value.memory.per_stage[e.value.memory.peak_stage];
            Entry entry;
            entry.order = order;
            RankedPlan& rp = entry.plan;
            rp.plan = p;
            rp.step_s = e.value.step_s;
            rp.tokens_per_s = e.value.tokens_per_s;
            rp.mfu = e.value.mfu;
            rp.peak_memory_bytes = peak.total_bytes;
            rp.capacity_bytes = peak.capacity_bytes;
            rp.fits = peak.total_bytes <= o.max_memory_fraction * peak.capacity_bytes;
            n.fitting += rp.fits;
            out.best.add(std::move(entry));
          }
  }
  return to;
}

// Runs work(i) for i in [0, count) on `threads` threads (the calling one among them); each i once.
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& work) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) work(i);
  };
#ifndef __EMSCRIPTEN__
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<long long>(threads, static_cast<long long>(count)); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
#else
  (void)threads;
  worker();
#endif
}

void add_counts(SearchResult& into, const SearchResult& n) {
  into.candidates += n.candidates, into.pruned_invalid += n.pruned_invalid, into.pruned_equivalent += n.pruned_equivalent;
  into.pruned_memory += n.pruned_memory, into.pruned_bound += n.pruned_bound, into.evaluated += n.evaluated, into.fitting += n.fitting;
  into.step_bound_s = std::max(into.step_bound_s, n.step_bound_s);  // the parts of one search share it
}

// The space cut into items: the units, and where each unit's items begin (begin.back(): all items).
struct Items {
  std::vector<Unit> units;
  std::vector<long long> begin;
};

Items make_items(const Config& base, const Space& s) {
  Items it;
  it.units = make_units(base, s);
  it.begin.push_back(0);
  for (const Unit& u : it.units) it.begin.push_back(it.begin.back() + unit_items(base, s, u));
  return it;
}

// Items [first, last) into one part, unit by unit; with a deadline, those searched before it passed
// (part.next: the first one not searched).
SearchPart run_items(const Config& base, const Space& space, const Items& items, const SearchOptions& o, bool memory_prune,
                     long long first, long long last, const Clock::time_point* deadline = nullptr) {
  UnitResult all;
  all.best.top = static_cast<std::size_t>(o.top);
  long long next = last;
  const auto from = std::upper_bound(items.begin.begin(), items.begin.end(), first);
  for (std::size_t i = static_cast<std::size_t>(std::max<long>(0, from - items.begin.begin() - 1));
       i < items.units.size() && items.begin[i] < last; ++i) {
    const long long lo = std::max(first, items.begin[i]) - items.begin[i], hi = std::min(last, items.begin[i + 1]) - items.begin[i];
    if (lo >= hi) continue;
    const long long stopped = search_unit(base, space, o, memory_prune, items.units[i], i, lo, hi, all, deadline);
    next = items.begin[i] + stopped;
    if (stopped < hi) break;
    if (deadline && Clock::now() >= *deadline) break;
  }
  all.best.trim();
  SearchPart part;
  part.result = all.counts;
  part.result.valid = part.result.evaluated + part.result.pruned_bound;
  part.result.step_bound_s = o.prune ? o.step_bound_s : 0.0;
  part.items = items.begin.back();
  part.next = std::max(first, std::min(next, last));
  for (Entry& e : all.best.entries) {
    part.result.best.push_back(std::move(e.plan));
    part.order.push_back(e.order);
  }
  return part;
}

// The seed of the step-time bound (search.h search_step_bound_s): a few items per mesh, searched as
// the full pass searches them (the same pruning, so each seed is a plan that pass simulates too).
double seed_bound(const Config& base, const Space& space, const Items& items, SearchOptions o) {
  o.step_bound_s = 0;
  UnitResult seeds;
  seeds.best.top = static_cast<std::size_t>(o.top);
  std::size_t zi = 0;  // the first choice of ZeRO 1 with the distributed optimizer, else the first
  for (std::size_t k = 0; k < space.zero_do.size(); ++k)
    if (space.zero_do[k].first && space.zero_do[k].zero <= 1 && space.zero_do[k].distributed_optimizer) {
      zi = k;
      break;
    }
  std::vector<std::size_t> rcs;  // no recompute and selective recompute of core attention, else the first choice
  for (std::size_t k = 0; k < space.recomputes.size(); ++k) {
    const RecomputeChoice& rc = space.recomputes[k];
    const bool wanted = rc.mode == Recompute::None ||
                        (rc.mode == Recompute::Selective && rc.modules == std::vector<RecomputeModule>{RecomputeModule::CoreAttn});
    if (wanted && rcs.size() < 2) rcs.push_back(k);
  }
  if (rcs.empty()) rcs.push_back(0);
  for (std::size_t i = 0; i < items.units.size(); ++i) {
    const Unit& u = items.units[i];
    // The space's first schedule only (1F1B when searched): a few seeds per mesh keep the seed short
    // (on the page it is one task); the `top` best plans are mostly variants of a few meshes.
    if (base.workload.global_batch % u.dp != 0 || u.schedule != space.schedules.front()) continue;
    const long long num_mbs = static_cast<long long>(micro_batches(base, space, u).size()),
                    num_rc = static_cast<long long>(space.recomputes.size());
    for (long long mbi = 0; mbi < std::min<long long>(2, num_mbs); ++mbi)  // micro-batches 1 and 2
      for (std::size_t ri : rcs) {
        const long long item = (static_cast<long long>(zi) * num_mbs + mbi) * num_rc + static_cast<long long>(ri);
        search_unit(base, space, o, true, u, i, item, item + 1, seeds, nullptr);
      }
  }
  seeds.best.trim();
  const std::vector<Entry>& e = seeds.best.entries;
  return e.size() >= seeds.best.top && e[seeds.best.top - 1].plan.fits ? e[seeds.best.top - 1].plan.step_s : 0.0;
}

// The options with the step-time bound decided: found (< 0 asked for it, in the first pass), or none.
SearchOptions with_bound(const Config& base, const Space& space, const Items& items, SearchOptions o, bool memory_prune) {
  if (!o.prune || !memory_prune) o.step_bound_s = 0;  // the second pass: nothing fits, nothing to beat
  else if (o.step_bound_s < 0) o.step_bound_s = seed_bound(base, space, items, o);
  return o;
}

// The errors that keep a config from being searched (none: it can be).
Errors search_errors(const Config& base, const SearchOptions& opt) {
  Errors errors;
  if (base.cluster.gpus <= 0) {
    errors.push_back({ErrorCode::MissingKey, "/cluster/gpus", "search needs the GPU count to fill (cluster.gpus)"});
  } else if (base.workload.mode != Mode::Train) {
    errors.push_back(
        {ErrorCode::Incompatible, "/workload/mode", "search ranks training plans; serving plans are evaluated one by one"});
  } else if (base.workload.global_batch <= 0) {
    // Without a global batch every plan fails validation: say so once rather than "0 valid".
    errors.push_back({ErrorCode::MissingKey, "/workload/global_batch",
                      "search needs the global batch (workload.global_batch, sequences per step) to rank training plans"});
  } else if (opt.top < 1 || !(opt.max_memory_fraction > 0 && opt.max_memory_fraction <= 1)) {
    errors.push_back({ErrorCode::OutOfRange, "/search", "top must be ≥ 1 and max_memory_fraction in (0, 1]"});
  }
  return errors;
}

}  // namespace

Result<SearchPart> search_part(const Config& base, const SearchOptions& opt, long long first, long long count, bool memory_prune,
                               double budget_s) {
  // The budget counts from the call, the space's setup below included, but the items get at least a
  // quarter of it: a setup that outlasts the budget (a slow device) still leaves parts of many items.
  const Clock::duration budget = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget_s));
  const Clock::time_point called = Clock::now();
  Result<SearchPart> out;
  out.errors = search_errors(base, opt);
  if (out.errors.empty() && !(first >= 0 && count >= 0))
    out.errors.push_back({ErrorCode::OutOfRange, "/first", "first and count must be ≥ 0"});
  if (!out.errors.empty()) return out;
  const Space space = make_space(base, opt);
  const Items items = make_items(base, space);
  const long long last = first > items.begin.back() - count ? items.begin.back() : first + count;
  const Clock::time_point deadline = std::max(called + budget, Clock::now() + budget / 4);
  SearchOptions o = opt;
  if (first < last) o = with_bound(base, space, items, opt, memory_prune);  // an empty range: no seed to search
  else o.step_bound_s = 0;
  out.value = run_items(base, space, items, o, memory_prune, std::min(first, last), last, budget_s > 0 ? &deadline : nullptr);
  return out;
}

double search_step_bound_s(const Config& base, const SearchOptions& opt) {
  if (!search_errors(base, opt).empty()) return 0;
  const Space space = make_space(base, opt);
  const Items items = make_items(base, space);
  SearchOptions o = opt;
  o.step_bound_s = -1;
  return with_bound(base, space, items, o, true).step_bound_s;
}

long long search_items(const Config& base, const SearchOptions& opt) {
  if (!search_errors(base, opt).empty()) return 0;
  return make_items(base, make_space(base, opt)).begin.back();
}

SearchPart merge_search_parts(const std::vector<SearchPart>& parts, int top) {
  SearchPart merged;
  SearchResult& r = merged.result;
  Best all;
  all.top = static_cast<std::size_t>(std::max(1, top));
  for (const SearchPart& part : parts) {
    add_counts(r, part.result);
    merged.items = std::max(merged.items, part.items);
    for (std::size_t i = 0; i < part.result.best.size(); ++i) {
      Entry e;
      e.plan = part.result.best[i];
      e.order = i < part.order.size() ? part.order[i] : 0;
      all.add(std::move(e));
    }
  }
  r.valid = r.evaluated + r.pruned_bound;
  all.trim();
  for (Entry& e : all.entries) {
    r.best.push_back(std::move(e.plan));
    merged.order.push_back(e.order);
  }
  return merged;
}

bool needs_second_pass(const SearchResult& merged) { return merged.fitting == 0 && merged.pruned_memory > 0; }

Result<SearchResult> search_plans(const Config& base, const SearchOptions& opt) {
  Result<SearchResult> out;
  out.errors = search_errors(base, opt);
  if (!out.errors.empty()) return out;
  const Space space = make_space(base, opt);
  const Items items = make_items(base, space);
  // One part per unit, taken by the threads as they come free; merged as search_part's are.
  auto run = [&](bool memory_prune) {
    const SearchOptions o = with_bound(base, space, items, opt, memory_prune);
    std::vector<SearchPart> parts(items.units.size());
    parallel_for(items.units.size(), opt.threads, [&](std::size_t i) {
      parts[i] = run_items(base, space, items, o, memory_prune, items.begin[i], items.begin[i + 1]);
    });
    return merge_search_parts(parts, opt.top).result;
  };
  out.value = run(true);
  if (needs_second_pass(out.value)) out.value = run(false);
  return out;
}

}  // namespace cutlab
