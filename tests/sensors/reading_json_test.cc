#include "agent/sensors/reading_json.h"

#include "agent/sensors/fake_sensor_source.h"
#include "agent/sensors/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace locus {
namespace {

using testing::HasSubstr;
using testing::Not;

SensorReading OneTask(bool numa_active) {
  SensorReading r;
  r.sources = {.sched = "tp_btf", .numa = "iter_task", .softirq = "tp_btf"};
  r.numa_active = numa_active;
  r.numa_status = numa_active ? "active (iter_task)" : "inactive: single node";
  TaskCounters t;
  t.tid = 7;
  t.pid = 5;
  t.comm = "ngi\"nx\n";
  t.migrations = 3;
  t.runtime_ns = {10, 20};
  t.numa_faults = {{.total = 4, .local = 0, .remote = 0}};
  r.tasks.push_back(t);
  r.cpus.resize(1);
  r.cpus[0].softirq_ns[kSoftirqNetRx] = 99;
  r.drops["sched.lru_evicted"] = 2;
  return r;
}

TEST(ReadingJsonTest, CarriesTheFieldsAndEscapes) {
  std::string j = ReadingToJson(OneTask(true), 1'000'000'000);
  EXPECT_THAT(j, HasSubstr("\"comm\":\"ngi\\\"nx\\n\""));
  EXPECT_THAT(j, HasSubstr("\"runtime_ns\":[10,20]"));
  EXPECT_THAT(j, HasSubstr("\"NET_RX\":{\"ns\":99,\"count\":0}"));
  EXPECT_THAT(j, HasSubstr("\"sched.lru_evicted\":2"));
  EXPECT_THAT(j, HasSubstr("\"numa_faults\":[{\"total\":4"));
}

TEST(ReadingJsonTest, InactiveNumaPrintsNoFaultFields) {
  std::string j = ReadingToJson(OneTask(false), 1);
  EXPECT_THAT(j, HasSubstr("\"active\":false"));
  EXPECT_THAT(j, HasSubstr("inactive: single node"));
  EXPECT_THAT(j, Not(HasSubstr("numa_faults")));
}

TEST(JsonUtilTest, ControlAndHighBytesAreEscaped) {
  EXPECT_EQ(JsonString(std::string("a\x01\xff", 3)), "\"a\\u0001\\u00ff\"");
}

TEST(FakeSensorSourceTest, ReplaysThenRepeatsTheLast) {
  FakeSensorSource fake;
  EXPECT_FALSE(fake.Read().ok());
  fake.Push(OneTask(false));
  SensorReading second = OneTask(false);
  second.tasks[0].migrations = 9;
  fake.Push(second);
  EXPECT_EQ(fake.Read()->tasks[0].migrations, 3u);
  EXPECT_EQ(fake.Read()->tasks[0].migrations, 9u);
  EXPECT_EQ(fake.Read()->tasks[0].migrations, 9u);
  EXPECT_EQ(fake.reads(), 4);
}

}  // namespace
}  // namespace locus
