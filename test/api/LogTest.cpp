//===- LogTest.cpp - Messages to a handler, by level ----------------------===//

#include "runtime/support/Log.h"
#include "lib/ContextImpl.h"

#include "rudnn/log.h"
#include "rudnn/rudnn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace rudnn;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

namespace {

/// Collects messages while alive, then restores stderr and the level.
class Captured {
public:
  Captured() : level(logLevel()) {
    setLogHandler([this](LogLevel at, const std::string &message) {
      messages.emplace_back(at, message);
    });
  }
  ~Captured() {
    setLogHandler({});
    setLogLevel(level);
  }
  std::vector<std::pair<LogLevel, std::string>> messages;

private:
  LogLevel level;
};

TEST(Log, HandlerReceivesTheLevelsInForce) {
  Captured captured;
  setLogLevel(LogLevel::Progress);
  runtime::warn("cache refused");
  runtime::log(LogLevel::Progress, "compiling");
  runtime::log(LogLevel::Info, "hidden at progress");
  setLogLevel(LogLevel::Warning);
  runtime::log(LogLevel::Progress, "hidden at warn");
  runtime::warn("still shown");
  EXPECT_THAT(captured.messages,
              ElementsAre(Pair(LogLevel::Warning, "warning: cache refused"),
                          Pair(LogLevel::Progress, "compiling"),
                          Pair(LogLevel::Warning, "warning: still shown")));
}

TEST(Log, ColdCompilesReportProgressAfterASecond) {
  Captured captured;
  setLogLevel(LogLevel::Progress);
  using Clock = std::chrono::steady_clock;
  // Begun two seconds ago: each kernel compiled now gets a line, cache
  // hits none.
  CompileProgress late("main", 3, Clock::now() - std::chrono::seconds(2));
  late.kernelDone("kda_fwd_prepare", true);
  late.kernelDone("kda_fwd_walk", false);
  late.kernelDone("kda_fwd_output", true);
  // A kernel compiled much later (a deferred one, at a later call) counts
  // its seconds afresh: within its first second, silent.
  CompileProgress later("main", 2, Clock::now() - std::chrono::seconds(5));
  later.kernelStarting();
  later.kernelDone("chunked", true); // 5 s after the start: a line
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  later.kernelStarting();
  later.kernelDone("decode", true);
  // Begun in the future, so within its first second: silent.
  CompileProgress early("main", 1, Clock::now() + std::chrono::hours(1));
  early.kernelDone("quick", true);
  ASSERT_EQ(captured.messages.size(), 3u);
  EXPECT_THAT(captured.messages[0].second,
              HasSubstr("compiled kda_fwd_prepare (1 of 3 for 'main', "));
  EXPECT_THAT(captured.messages[1].second,
              HasSubstr("compiled kda_fwd_output (3 of 3 for 'main', "));
  EXPECT_EQ(captured.messages[1].first, LogLevel::Progress);
  EXPECT_THAT(captured.messages[2].second,
              HasSubstr("compiled chunked (1 of 2 for 'main', "));
}

struct CSink {
  std::vector<std::string> messages;
  std::vector<rudnn_log_level_t> levels;
};

TEST(Log, CCallbackReceivesMessagesWithItsData) {
  const LogLevel before = logLevel();
  CSink sink;
  ASSERT_EQ(rudnn_set_log_callback(
                [](rudnn_log_level_t level, const char *message, void *data) {
                  static_cast<CSink *>(data)->messages.push_back(message);
                  static_cast<CSink *>(data)->levels.push_back(level);
                },
                &sink),
            RUDNN_STATUS_OK);
  ASSERT_EQ(rudnn_set_log_level(RUDNN_LOG_INFO), RUDNN_STATUS_OK);
  runtime::log(LogLevel::Info, "an event");
  runtime::log(LogLevel::Debug, "a lookup");
  EXPECT_EQ(rudnn_set_log_level(static_cast<rudnn_log_level_t>(7)),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("level is 7"));
  ASSERT_EQ(rudnn_set_log_callback(nullptr, nullptr), RUDNN_STATUS_OK);
  runtime::log(LogLevel::Info, "to stderr");
  setLogLevel(before);
  EXPECT_THAT(sink.messages, ElementsAre("an event"));
  EXPECT_THAT(sink.levels, ElementsAre(RUDNN_LOG_INFO));
}

} // namespace
