#pragma once
// memtrace's core umbrella: the vocabulary, features, random numbers, memories, environments,
// learners (learn/) and the loops that compose them (loop/). Cheap to include (docs/design.md
// gives its compile time); exact analysis (memtrace/analysis.hpp) and experiment I/O (memtrace/experiment.hpp) are
// opt-in umbrellas, and memtrace/memtrace.hpp includes all three, the .pomdp file format
// (env/pomdp_file.hpp, env/pomdp_model.hpp: a parser, left out of the core for its compile time)
// and the weights files (safetensors.hpp, learn/ppo_weights.hpp).

#include "memtrace/concepts.hpp"
#include "memtrace/env/alias.hpp"
#include "memtrace/env/finite_hmm.hpp"
#include "memtrace/env/finite_pomdp.hpp"
#include "memtrace/env/minigrid_tmaze.hpp"
#include "memtrace/env/noisy_random_walk.hpp"
#include "memtrace/env/pendulum.hpp"
#include "memtrace/env/tmaze.hpp"
#include "memtrace/env/two_state_hmm.hpp"
#include "memtrace/experience.hpp"
#include "memtrace/features.hpp"
#include "memtrace/learn/actor_critic.hpp"
#include "memtrace/learn/adam.hpp"
#include "memtrace/learn/feature_normalizer.hpp"
#include "memtrace/learn/gae.hpp"
#include "memtrace/learn/mlp.hpp"
#include "memtrace/learn/ppo.hpp"
#include "memtrace/learn/td.hpp"
#include "memtrace/learn/td_bank.hpp"
#include "memtrace/learn/trace_td.hpp"
#include "memtrace/loop/learning_curve.hpp"
#include "memtrace/loop/ppo.hpp"
#include "memtrace/loop/rollout.hpp"
#include "memtrace/loop/run_td.hpp"
#include "memtrace/matrix.hpp"
#include "memtrace/memory/memory_trace.hpp"
#include "memtrace/memory/trace_bank.hpp"
#include "memtrace/memory/vector_observation.hpp"
#include "memtrace/memory/window.hpp"
#include "memtrace/memory/with_actions.hpp"
#include "memtrace/random.hpp"
#include "memtrace/version.hpp"
#include "memtrace/vocabulary.hpp"
