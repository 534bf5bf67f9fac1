// The fragments of docs/experiments.md, compiled and run by ctest (docs/design.md, "Doc snippets
// are compiled"). Each function holds one ```cpp block of the page, as it is written there, and
// defines around it what the page leaves to the reader. Files go to the working directory.
#include <memtrace/experiment/bootstrap.hpp>
#include <memtrace/experiment/results.hpp>
#include <memtrace/experiment/results_folder.hpp>
#include <memtrace/experiment/shard.hpp>
#include <memtrace/experiment/statistics.hpp>
#include <memtrace/experiment/sweep.hpp>
#include <memtrace/experiment/sweep_runner.hpp>
#include <memtrace/random.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

const std::uint64_t seed = 3;
const std::size_t num_settings = 4, num_seeds = 5, num_runs = num_settings * num_seeds;

// A stand-in for an experiment: the setting plus a number drawn from the run's own generator.
double one_experiment(std::size_t setting, memtrace::DefaultGenerator& gen) {
  return static_cast<double>(setting) + memtrace::uniform_real(gen);
}

bool parallel() {
  std::vector<double> errors(num_runs);
  memtrace::parallel_runs(num_runs, [&](std::size_t run) {
    auto gen = memtrace::make_stream(seed, run);  // this run's own generator
    errors[run] = one_experiment(run / num_seeds, gen);
  });

  std::vector<double> errors_of_one_setting(errors.begin(), errors.begin() + num_seeds);
  memtrace::Summary s = memtrace::summarize(errors_of_one_setting);  // std::span<const double>
  // s.n, s.mean, s.sd, s.ci_low, s.ci_high
  return s.n == num_seeds && s.ci_low < s.mean && s.mean < s.ci_high && s.mean < 1.0;
}

bool bootstrap() {
  const std::vector<double> hidden_traces = {-232, -260, -265, -204, -262};  // train returns over seeds
  const std::vector<double> hidden_memoryless = {-1080, -1050, -1100, -1070, -1090};
  const std::vector<double> observed_traces = {-270, -240, -300, -255, -280};
  const std::vector<std::vector<double>> samples = {hidden_traces, hidden_memoryless, observed_traces};
  memtrace::DefaultGenerator gen = memtrace::make_stream(seed, 1'000'000);  // a stream of its own
  const memtrace::BootstrapInterval gap = memtrace::percentile_bootstrap(
      std::span(samples), [](std::span<const double> m) { return (m[0] - m[1]) / (m[2] - m[1]); }, gen);
  // gap.estimate, gap.low, gap.high: 95% by default, 10,000 resamples
  return gap.low < gap.estimate && gap.estimate < gap.high && gap.estimate > 1.0;
}

bool checkpointed() {
  std::filesystem::remove("sweep.csv");
  memtrace::ResultsCsv out("sweep.csv", {"setting", "seed", "value_error"}, 2);  // 2 key columns
  memtrace::checkpointed_runs(
      out, num_settings * num_seeds,
      [&](std::size_t i) { return memtrace::csv_row(i / num_seeds, i % num_seeds); },  // the key
      [&](std::size_t i) {                                                             // the rest
        auto gen = memtrace::make_stream(seed, i);
        return memtrace::csv_row(one_experiment(i / num_seeds, gen));
      });
  return out.size() == num_runs;
}

const std::string description = "docs/experiments.md: a sweep in two shards";
const std::vector<std::string> header{"run", "value"};
const std::size_t key_columns = 1;

std::size_t experiments_run = 0;  // calls of run_experiment

std::vector<std::string> run_experiment(std::size_t run) {
  ++experiments_run;
  auto gen = memtrace::make_stream(seed, run);
  return memtrace::csv_row(run, one_experiment(run / num_seeds, gen));
}

void one_shard(const std::string& flag_text, const std::filesystem::path& out_dir) {
  memtrace::Shard shard = memtrace::parse_shard(flag_text, "--shard");  // "I/N"; throws naming the flag
  memtrace::prepare_results_folder(out_dir, description, shard);        // experiment.txt, shard.txt
  memtrace::ResultsCsv out(out_dir / "runs.csv", header, key_columns);
  for (std::size_t run : shard.runs(num_runs)) out.append(run_experiment(run));  // or: if (shard.contains(run))
}

bool shards() {
  const std::filesystem::path base = "experiments_shards";
  std::filesystem::remove_all(base);
  one_shard("0/2", base / "0");
  one_shard("1/2", base / "1");
  const std::vector<std::filesystem::path> folders{base / "0", base / "1"};
  const std::filesystem::path out_dir = base / "merged";
  std::vector<std::vector<std::string>> every_run_key;
  for (std::size_t run = 0; run < num_runs; ++run) every_run_key.push_back(memtrace::csv_row(run));

  memtrace::MergeSpec spec;
  spec.description = description;  // what experiment.txt must say
  spec.header = header;            // the results file (spec.results_file, default "runs.csv")
  spec.key_columns = key_columns;
  spec.keys = every_run_key;  // the key of each of the R runs, in the order wanted
  memtrace::CsvTable runs = memtrace::merge_shards_into(out_dir, folders, spec);
  return runs.rows.size() == num_runs;
}

// One invocation of a sweep program: the runs of `shard` into out_dir, or the merge of shard_folders.
std::size_t invocation(const memtrace::Shard& shard, const std::vector<std::filesystem::path>& shard_folders,
                       const std::filesystem::path& out_dir) {
  std::vector<std::vector<std::string>> every_run_key;
  for (std::size_t run = 0; run < num_runs; ++run) every_run_key.push_back(memtrace::csv_row(run));
  const std::size_t before = experiments_run;

  memtrace::SweepRequest request{out_dir, shard, shard_folders};  // no shard folders: run the shard
  std::vector<memtrace::MergeSpec> specs;                         // a merge: each results file and its keys
  if (!shard_folders.empty()) specs.push_back({{}, "runs.csv", header, key_columns, every_run_key});
  memtrace::open_results_folder(request, description, specs, {"runs.csv"});  // experiment.txt, provenance.txt
  memtrace::ResultsCsv out(out_dir / "runs.csv", header, key_columns);
  const auto done = [&](std::size_t run) { return out.contains(memtrace::csv_row(run)); };
  for (std::size_t run : memtrace::runs_to_do(shard, num_runs, done)) out.append(run_experiment(run));
  return experiments_run - before;  // the runs this invocation computed
}

bool invocations() {
  const std::filesystem::path base = "experiments_invocations";
  std::filesystem::remove_all(base);
  const std::size_t first = invocation(memtrace::Shard(0, 2), {}, base / "0");
  const std::size_t again = invocation(memtrace::Shard(0, 2), {}, base / "0");  // resumes: nothing left
  const std::size_t second = invocation(memtrace::Shard(1, 2), {}, base / "1");
  const std::size_t merge = invocation(memtrace::Shard(), {base / "0", base / "1"}, base / "merged");
  return first == num_runs / 2 && again == 0 && second == num_runs / 2 && merge == 0 &&
         memtrace::read_csv(base / "merged" / "runs.csv").rows.size() == num_runs &&
         std::filesystem::exists(base / "merged" / "provenance-shard-1.txt");
}

std::size_t runner(const memtrace::Shard& shard, const std::vector<std::filesystem::path>& shard_folders,
                   const std::filesystem::path& out_dir) {
  memtrace::SweepPlan plan{description, {{"runs.csv", {"setting", "seed", "value_error"}, 2}}, {}};
  for (std::size_t run = 0; run < num_runs; ++run)  // run = setting · num_seeds + seed
    plan.runs.push_back({{{memtrace::csv_row(run / num_seeds, run % num_seeds)}}, double(run / num_seeds + 1)});
  const memtrace::SweepOutcome outcome =
      memtrace::run_sweep({out_dir, shard, shard_folders}, plan, [&](const memtrace::SweepRunContext& c) {
        auto gen = memtrace::make_stream(seed, c.index);  // this run's own generator
        const double error = one_experiment(c.index / num_seeds, gen);
        return std::optional<memtrace::SweepRows>(
            {{memtrace::csv_row(c.index / num_seeds, c.index % num_seeds, error)}});
      });
  return outcome.computed;
}

bool sweep_runner() {
  const std::filesystem::path base = "experiments_runner";
  std::filesystem::remove_all(base);
  const std::size_t whole = runner(memtrace::Shard(), {}, base / "whole");
  const std::size_t first = runner(memtrace::Shard(0, 2), {}, base / "0");
  const std::size_t second = runner(memtrace::Shard(1, 2), {}, base / "1");
  const std::size_t merge = runner(memtrace::Shard(), {base / "0", base / "1"}, base / "merged");
  const auto rows = [&](const char* folder) {
    auto table = memtrace::read_csv(base / folder / "runs.csv", 2);
    std::sort(table.rows.begin(), table.rows.end());
    return table.rows;
  };
  return whole == num_runs && first == num_runs / 2 && second == num_runs / 2 && merge == 0 &&
         rows("merged") == rows("whole");
}
}  // namespace

int main() {
  const bool ok = parallel() && bootstrap() && checkpointed() && shards() && invocations() && sweep_runner();
  std::puts(ok ? "docs/experiments.md: ok" : "docs/experiments.md: a fragment computed something else");
  return ok ? 0 : 1;
}
