#pragma once
// memtrace's experiment umbrella: parallel sweeps with one random stream per run, means and
// confidence intervals, results files that survive interruption, shards and provenance
// (docs/experiments.md). What a sweep runs (the loops of memtrace/loop/) is in the core umbrella.

#include "memtrace/experiment/provenance.hpp"
#include "memtrace/experiment/results.hpp"
#include "memtrace/experiment/results_folder.hpp"
#include "memtrace/experiment/shard.hpp"
#include "memtrace/experiment/statistics.hpp"
#include "memtrace/experiment/sweep.hpp"
#include "memtrace/experiment/sweep_runner.hpp"
#include "memtrace/files.hpp"
