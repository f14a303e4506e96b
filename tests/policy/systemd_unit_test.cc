// targets.systemd_unit: empty, or a systemd service or scope name.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/default_policy.h"
#include "policy/validate.h"

namespace locus {
namespace {

using ::testing::HasSubstr;

absl::Status WithUnit(const std::string& unit) {
  v1::Policy policy = DefaultPolicy();
  policy.mutable_targets()->set_systemd_unit(unit);
  return ValidatePolicy(policy);
}

TEST(SystemdUnitTest, EmptyOrAServiceOrScope) {
  EXPECT_TRUE(WithUnit("").ok());
  EXPECT_TRUE(WithUnit("nginx.service").ok());
  EXPECT_TRUE(WithUnit("nginx@main.service").ok());
  EXPECT_TRUE(WithUnit("docker-0a1b.scope").ok());
}

TEST(SystemdUnitTest, AnythingElseIsRefusedWithItsField) {
  for (const std::string& unit :
       std::vector<std::string>{"nginx", "nginx.socket", "../x.service",
                                "a b.service", std::string("nginx\xff.service"),
                                std::string(300, 'a') + ".service"}) {
    absl::Status status = WithUnit(unit);
    ASSERT_FALSE(status.ok()) << unit;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("targets.systemd_unit"));
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("is not a systemd service or scope name"));
  }
}

// A user's own manager holds whatever that user starts: never a voucher.
TEST(SystemdUnitTest, AUsersServiceManagerIsRefused) {
  absl::Status status = WithUnit("user@1000.service");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("targets.systemd_unit"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("is a user's own service manager"));
}

}  // namespace
}  // namespace locus
