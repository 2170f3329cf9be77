// wl_options_test.cc - the one options module (emu/wl_options.h): the size
// parser and the table-driven parser in each program's syntax (p2run, p2sim,
// the workloads). The programs' own wordings are checked by their cases
// (tests/emu/p2run_cases.sh, tests/workloads).
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "wl_options.h"

namespace {

// argv for wl_parse_args: the program's name, then `args`.
struct Argv {
  explicit Argv(std::vector<std::string> args) : text(std::move(args)) {
    text.insert(text.begin(), "prog");
    for (std::string& s : text) ptrs.push_back(s.data());
  }
  int argc() const { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> text;
  std::vector<char*> ptrs;
};

TEST(WlOptions, SizesTakeBinarySuffixes) {
  uint64_t v = 0;
  EXPECT_EQ(wl_parse_size("8", &v), 0);
  EXPECT_EQ(v, 8u);
  EXPECT_EQ(wl_parse_size("4k", &v), 0);
  EXPECT_EQ(v, 4096u);
  EXPECT_EQ(wl_parse_size("16M", &v), 0);
  EXPECT_EQ(v, 16u << 20);
  EXPECT_EQ(wl_parse_size("1G", &v), 0);
  EXPECT_EQ(v, 1u << 30);
  for (const char* bad : {"", "-1", " 8", "+8", "8Q", "8KB", "K", "17179869184G",
                          "99999999999999999999"})
    EXPECT_EQ(wl_parse_size(bad, &v), -1) << bad;
  char buf[32];
  EXPECT_STREQ(wl_format_size(16u << 20, buf, sizeof buf), "16M");
  EXPECT_STREQ(wl_format_size(1000, buf, sizeof buf), "1000");
}

TEST(WlOptions, NumbersInRange) {
  long n = 0;
  EXPECT_EQ(wl_parse_long("+4", 1, 64, &n), 0);
  EXPECT_EQ(n, 4);
  EXPECT_EQ(wl_parse_long("0", 1, 64, &n), -1);
  EXPECT_EQ(wl_parse_long("65", 1, 64, &n), -1);
  EXPECT_EQ(wl_parse_long("4x", 1, 64, &n), -1);
  EXPECT_EQ(wl_parse_long("", 1, 64, &n), -1);
  double s = 0;
  EXPECT_EQ(wl_parse_seconds("0.5", &s), 0);
  EXPECT_EQ(s, 0.5);
  for (const char* bad : {"0", "-1", "x", "", "1e999", "1s"})
    EXPECT_EQ(wl_parse_seconds(bad, &s), -1) << bad;
}

// p2run's way: NAME=VALUE for any flag, -n4, once each, never empty, up to
// "--" or the program.
TEST(WlOptions, LauncherSyntax) {
  const char *map = nullptr, *n = nullptr;
  const wl_option table[] = {{"--map", WL_OPTION_STRING, &map, "FILE", nullptr},
                             {"-n", WL_OPTION_STRING, &n, "N", nullptr}};
  const wl_args args = {WL_SYNTAX_ANY_EQUALS | WL_SYNTAX_SHORT_ATTACHED | WL_SYNTAX_OPERANDS |
                            WL_SYNTAX_HELP | WL_SYNTAX_ONCE | WL_SYNTAX_NO_EMPTY,
                        table, std::size(table), nullptr, nullptr};
  wl_args_result r;
  Argv ok({"-n4", "--map=m", "--", "prog", "-x"});
  ASSERT_EQ(wl_parse_args(&args, ok.argc(), ok.argv(), &r), WL_PARSE_OK);
  EXPECT_STREQ(n, "4");
  EXPECT_STREQ(map, "m");
  EXPECT_EQ(r.next, 4);
  n = nullptr;
  Argv equals({"-n=2", "prog"});
  ASSERT_EQ(wl_parse_args(&args, equals.argc(), equals.argv(), &r), WL_PARSE_OK);
  EXPECT_STREQ(n, "2");
  EXPECT_EQ(r.next, 2);
  Argv twice({"-n", "2", "-n", "3"});
  ASSERT_EQ(wl_parse_args(&args, twice.argc(), twice.argv(), &r), WL_PARSE_ERROR);
  EXPECT_EQ(r.error, WL_ARGS_TWICE);
  EXPECT_STREQ(r.option->name, "-n");
  EXPECT_STREQ(r.value, "3");
  Argv empty({"--map="});
  ASSERT_EQ(wl_parse_args(&args, empty.argc(), empty.argv(), &r), WL_PARSE_ERROR);
  EXPECT_EQ(r.error, WL_ARGS_EMPTY);
  Argv unknown({"-n2=3"});
  ASSERT_EQ(wl_parse_args(&args, unknown.argc(), unknown.argv(), &r), WL_PARSE_ERROR);
  EXPECT_EQ(r.error, WL_ARGS_UNKNOWN);
  EXPECT_STREQ(r.arg, "-n2=3");
  Argv missing({"--map"});
  ASSERT_EQ(wl_parse_args(&args, missing.argc(), missing.argv(), &r), WL_PARSE_ERROR);
  EXPECT_EQ(r.error, WL_ARGS_MISSING);
  Argv help({"-n", "x", "-h", "--bogus"});
  EXPECT_EQ(wl_parse_args(&args, help.argc(), help.argv(), &r), WL_PARSE_HELP);
}

// p2sim's way: --flag=value for long flags only, a flag takes no value, no
// help flag.
TEST(WlOptions, SimulatorSyntax) {
  const char* job = nullptr;
  int list = 0;
  const wl_option table[] = {{"--job", WL_OPTION_STRING, &job, "SHM", nullptr},
                             {"--list-params", WL_OPTION_FLAG, &list, nullptr, nullptr}};
  const wl_args args = {WL_SYNTAX_LONG_EQUALS | WL_SYNTAX_ONCE, table, std::size(table), nullptr,
                        nullptr};
  wl_args_result r;
  Argv ok({"--job=", "--list-params", "--list-params"});
  ASSERT_EQ(wl_parse_args(&args, ok.argc(), ok.argv(), &r), WL_PARSE_OK);
  EXPECT_STREQ(job, "");
  EXPECT_EQ(list, 1);
  for (const char* bad : {"--list-params=1", "-h", "--jobx", "prog"}) {
    Argv a({bad});
    ASSERT_EQ(wl_parse_args(&args, a.argc(), a.argv(), &r), WL_PARSE_ERROR) << bad;
    EXPECT_EQ(r.error, WL_ARGS_UNKNOWN) << bad;
  }
}

// The workloads' way: -b8, --csv=FILE, values converted as they come, a
// check of the program's own, and the workloads' wording.
TEST(WlOptions, WorkloadSyntaxAndWording) {
  uint64_t bytes = 0;
  int count = 0;
  const wl_option table[] = {{"-b", WL_OPTION_SIZE, &bytes, "MIN", "smallest"},
                             {"--ranks", WL_OPTION_COUNT, &count, "N", "ranks"}};
  auto odd_refused = [](const wl_option* o, void*) -> int {
    return o->kind == WL_OPTION_COUNT && *static_cast<int*>(o->target) % 2 != 0;
  };
  const wl_args args = {WL_SYNTAX_SHORT_ATTACHED | WL_SYNTAX_LONG_EQUALS | WL_SYNTAX_HELP, table,
                        std::size(table), odd_refused, nullptr};
  wl_args_result r;
  Argv ok({"-b8K", "--ranks=4"});
  ASSERT_EQ(wl_parse_args(&args, ok.argc(), ok.argv(), &r), WL_PARSE_OK);
  EXPECT_EQ(bytes, 8192u);
  EXPECT_EQ(count, 4);
  char message[128];
  Argv bad({"-b=8"});
  ASSERT_EQ(wl_parse_args(&args, bad.argc(), bad.argv(), &r), WL_PARSE_ERROR);
  wl_args_message(&r, message, sizeof message);
  EXPECT_STREQ(message, "-b: '=8' is not a size (digits with an optional K, M or G suffix)");
  Argv odd({"--ranks", "3"});
  ASSERT_EQ(wl_parse_args(&args, odd.argc(), odd.argv(), &r), WL_PARSE_ERROR);
  EXPECT_EQ(r.error, WL_ARGS_INVALID);
  Argv missing({"-b"});
  ASSERT_EQ(wl_parse_args(&args, missing.argc(), missing.argv(), &r), WL_PARSE_ERROR);
  wl_args_message(&r, message, sizeof message);
  EXPECT_STREQ(message, "-b needs a value (MIN)");
  Argv unknown({"--bogus"});
  ASSERT_EQ(wl_parse_args(&args, unknown.argc(), unknown.argv(), &r), WL_PARSE_ERROR);
  wl_args_message(&r, message, sizeof message);
  EXPECT_STREQ(message, "unknown flag '--bogus'");
}

}  // namespace
