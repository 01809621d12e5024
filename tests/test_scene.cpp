#include <catch2/catch.hpp>

#include "core/scene.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

TEST_CASE("the timeline scene has a rect per op and per idle interval, scaled to the makespan", "[scene]") {
  ScheduleInput in;
  in.name = Schedule::OneFOneB;
  in.stages = 4;
  in.micro_batches = 8;
  in.times.assign(4, OpTimes{1.0, 2.0, 0.0});
  const Result<ScheduleResult> r = simulate_schedule(in);
  REQUIRE(r.ok());
  TimelineLayout L;
  L.width = 1064;
  L.label_width = 64;
  const Scene sc = timeline_scene(r.value, L);
  REQUIRE(sc.rects.size() == r.value.ops.size() + r.value.idle.size());
  // Makespan (m + p − 1)(F + B) = 33 time units over 1000 pixels.
  const double px_per_s = 1000.0 / 33.0;
  for (const SceneRect& rect : sc.rects) {
    REQUIRE(rect.x >= L.label_width - 1e-9);
    REQUIRE(rect.x + rect.w <= L.width + 1e-6);
    REQUIRE_THAT(rect.w, WithinRel((rect.end_s - rect.start_s) * px_per_s, 1e-9));
    REQUIRE(rect.y == rect.stage * (L.row_height + L.row_gap));
  }
  REQUIRE(sc.height == L.axis_height + 4 * (L.row_height + L.row_gap));
  REQUIRE_FALSE(sc.grid.empty());
}

TEST_CASE("serving: pp micro-batches in flight keep the stages busy", "[scene]") {
  // Two stages of 1 s, no hand-off time, two micro-batches, three steps each: stage 0 runs
  // mb0, mb1, mb0, … from t = 0, stage 1 the same from t = 1; a micro-batch re-enters stage 0 when its
  // last stage is done (t = 2 for mb0), so the only idle second is stage 1's first and stage 0's last.
  const Scene sc = serving_walk_scene({1.0, 1.0}, 0.0, 2, 3);
  int decode = 0;
  double idle = 0;
  for (const SceneRect& r : sc.rects) {
    if (r.kind == "decode") ++decode;
    if (r.kind == "idle") idle += r.end_s - r.start_s;
  }
  REQUIRE(decode == 12);
  REQUIRE(idle == 2.0);
  // One micro-batch: each stage waits for the other, half the time.
  idle = 0;
  for (const SceneRect& r : serving_walk_scene({1.0, 1.0}, 0.0, 1, 3).rects)
    if (r.kind == "idle") idle += r.end_s - r.start_s;
  REQUIRE(idle == 6.0);  // 3 s idle on each stage of a 6 s span
}
