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
