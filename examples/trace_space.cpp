// The paper's Figures 2 and 6: the set Z_λ^m of the traces of all
// length-m histories of one-hot observations, projected orthogonally onto the (|Y| - 1)-dimensional
// subspace of eq. (4), one panel per λ; and a box-counting estimate of the Minkowski dimension
// of Z_λ against d_λ = log|Y| / log(1/λ) of Lemma 4.4. See docs/theory.md.
//
//   trace_space                                 # |Y| = 3, λ = 0.3 0.5 0.7, m = 7: trace_space.png
//   trace_space --observations 4                # |Y| = 4 in 3-D, m = 6: trace_space_4d.png
//   trace_space --lambdas 0.2 0.4 --length 9
//
// Points are coloured by their newest observation y_0. Marked: the centres of the triangles (for
// |Y| = 4 tetrahedra) of traces that share their length-1 and length-2 windows; by the caption of
// Fig. 2 these are the traces of the windows themselves, z_λ(y_0) = (1 - λ) e_{y_0} and
// z_λ(y_{-1}, y_0), projected (their sums 1 - λ and 1 - λ² differ from the cloud's 1 - λ^m, but the
// projection drops the sum). Box counting: box_counting_dimension with sides from --epsilon-max down
// to --epsilon-min; when Z_λ^m for that ε_min would exceed --max-points points (λ near 1), ε_min is
// raised to what the budget allows, and the table says so.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memtrace/analysis/trace_geometry.hpp>
#include <memtrace/analysis/trace_space.hpp>
#include <memtrace/experiment/results.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "plot.hpp"

namespace {

using namespace memtrace;
namespace fs = std::filesystem;

struct Options {
  std::vector<double> lambdas{0.3, 0.5, 0.7};
  std::size_t observations = 3;
  std::size_t length = 0;  // 0: 7 for |Y| = 3, 6 for |Y| = 4
  double epsilon_max = 0.1;
  double epsilon_min = 0.002;
  std::size_t max_points = std::size_t{1} << 20;
  std::string out = "trace_space_out";
  bool plot = true;
};

/// The box-counting settings for λ: the defaults with o's sides, ε_min raised if the budget needs it.
BoxCountingOptions box_options(double lambda, const Options& o) {
  BoxCountingOptions b;
  b.epsilon_max = o.epsilon_max;
  b.epsilon_min = o.epsilon_min;
  b.max_points = o.max_points;
  // The longest affordable history, and the smallest ε_min whose Z_λ^m it can enumerate.
  std::size_t m_max = 0;
  for (std::size_t points = o.observations; points <= o.max_points; points *= o.observations) ++m_max;
  if (m_max == 0) throw std::invalid_argument("--max-points must be at least --observations");
  const double radius = std::sqrt(1.0 - 1.0 / static_cast<double>(o.observations));
  const double affordable = std::pow(lambda, static_cast<double>(m_max)) * radius / b.approximation;
  if (affordable > b.epsilon_min) {
    b.epsilon_min = affordable * (1.0 + 1e-12);
    if (b.epsilon_max < 4.0 * b.epsilon_min) b.epsilon_max = 4.0 * b.epsilon_min;
  }
  return b;
}

int run(const Options& o) {
  if (!(o.epsilon_max > o.epsilon_min))
    throw std::invalid_argument("--epsilon-max (" + csv_field(o.epsilon_max) + ") must be above --epsilon-min (" +
                                csv_field(o.epsilon_min) + ")");
  const std::size_t n = o.observations;
  const std::size_t m = o.length != 0 ? o.length : (n == 3 ? 7 : 6);
  const fs::path dir(o.out);
  fs::create_directories(dir);

  // The traces: panel, λ, |Y|, window length, window index (Window's layout), y_0, coordinates.
  const fs::path points_csv = dir / "trace_space.csv";
  {
    std::ofstream out(points_csv);
    out << "panel,lambda,observations,length,index,newest";
    for (std::size_t i = 1; i < n; ++i) out << ",c" << i;
    out << '\n';
    for (std::size_t panel = 0; panel < o.lambdas.size(); ++panel) {
      const double lambda = o.lambdas[panel];
      std::vector<std::size_t> lengths{m};  // the cloud, then the window centres
      for (std::size_t k = 1; k <= 2 && k < m; ++k) lengths.push_back(k);
      for (const std::size_t length : lengths) {
        const Eigen::MatrixXd c = trace_space_coordinates(trace_set(lambda, n, length));
        for (Eigen::Index j = 0; j < c.cols(); ++j) {
          out << panel << ',' << csv_field(lambda) << ',' << n << ',' << length << ',' << j << ','
              << static_cast<std::size_t>(j) % n;
          for (Eigen::Index i = 0; i < c.rows(); ++i) out << ',' << csv_field(c(i, j));
          out << '\n';
        }
      }
    }
    if (!out) throw std::runtime_error("could not write " + points_csv.string());
  }

  // Box counting: the counts per λ and ε, and the fitted line.
  const fs::path boxes_csv = dir / "box_counting.csv";
  std::ofstream boxes(boxes_csv);
  boxes << "panel,lambda,observations,length,epsilon,count,fit,d_lambda,estimate\n";
  std::printf("|Y| = %zu, pictures of Z_lambda^%zu (%.0f points per lambda)\n", n, m,
              std::pow(static_cast<double>(n), static_cast<double>(m)));
  std::string estimates, dimensions;
  std::printf("%8s %10s %12s %10s %6s %22s\n", "lambda", "d_lambda", "min(|Y|-1,d)", "estimate", "m", "epsilon range");
  for (std::size_t panel = 0; panel < o.lambdas.size(); ++panel) {
    const double lambda = o.lambdas[panel];
    const BoxCountingOptions b = box_options(lambda, o);
    const BoxCountingEstimate e = box_counting_dimension(lambda, n, b);
    const double d = d_lambda(lambda, n);
    for (std::size_t k = 0; k < e.counts.size(); ++k) {
      const double fit = std::exp(e.intercept - e.dimension * std::log(e.epsilons[k]));
      boxes << panel << ',' << csv_field(lambda) << ',' << n << ',' << e.length << ',' << csv_field(e.epsilons[k])
            << ',' << e.counts[k] << ',' << csv_field(fit) << ',' << csv_field(d) << ',' << csv_field(e.dimension)
            << '\n';
    }
    estimates += (estimates.empty() ? "" : " ") + csv_field(e.dimension);
    dimensions += (dimensions.empty() ? "" : " ") + csv_field(d);
    std::printf("%8.3f %10.4f %12.4f %10.4f %6zu   [%.4g, %.4g]%s\n", lambda, d, minkowski_dimension_bound(lambda, n),
                e.dimension, e.length, e.epsilons.back(), e.epsilons.front(),
                b.epsilon_min > o.epsilon_min ? " (raised: --max-points)" : "");
  }
  if (!boxes) throw std::runtime_error("could not write " + boxes_csv.string());
  boxes.close();
  std::printf("wrote %s and %s\n", points_csv.c_str(), boxes_csv.c_str());
  if (!o.plot) return 0;

  std::string lambdas;
  for (const double lambda : o.lambdas) lambdas += (lambdas.empty() ? "" : " ") + csv_field(lambda);
  return examples::draw_figure("trace_space.gp", dir / (n == 3 ? "trace_space.png" : "trace_space_4d.png"),
                               {{"csv", points_csv.string()},
                                {"boxes", boxes_csv.string()},
                                {"lambdas", lambdas},
                                {"observations", std::to_string(n)},
                                {"length", std::to_string(m)},
                                {"estimates", estimates},
                                {"dimensions", dimensions}})
             ? 0
             : 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "The paper's Fig. 2: trace space of one-hot observations, the traces of all length-m histories\n"
      "projected onto the subspace of eq. (4) (|Y| = 3: a plane; |Y| = 4: 3-D, Figure 6),\n"
      "coloured by the newest observation, with the centres of the length-1 and length-2 windows marked;\n"
      "and box-counting estimates of the Minkowski dimension of Z_lambda against d_lambda (Lemma 4.4).\n"
      "Writes DIR/trace_space.csv (panel,lambda,observations,length,index,newest,c1,c2[,c3]; rows of\n"
      "length 1 and 2 are the window centres), DIR/box_counting.csv and DIR/trace_space.png\n"
      "(DIR/trace_space_4d.png for --observations 4), each with an .svg beside it."};
  memtrace::examples::cli_conventions(app, "trace_space");
  app.add_option("--lambdas", o.lambdas, "Forgetting factors, one panel each")
      ->check(CLI::Range(0.0, 0.999999))
      ->expected(1, 6);
  app.add_option("--observations", o.observations, "|Y|: 3 (a plane) or 4 (3-D)")->check(CLI::IsMember({3, 4}));
  app.add_option("--length", o.length, "History length m of the pictures (0: 7 for |Y| = 3, 6 for |Y| = 4)")
      ->check(CLI::Range(0, 12));
  app.add_option("--epsilon-max", o.epsilon_max, "Largest box side of the box counting")->check(CLI::Range(1e-6, 10.0));
  app.add_option("--epsilon-min", o.epsilon_min, "Smallest box side of the box counting")
      ->check(CLI::Range(1e-6, 10.0));
  app.add_option("--max-points", o.max_points, "Largest Z_lambda^m enumerated for the box counting")
      ->check(CLI::Range(std::size_t{4}, std::size_t{1} << 26));
  app.add_option("--out", o.out, "Output folder");
  app.add_flag("!--no-plot", o.plot, "Write the CSV files only");
  CLI11_PARSE(app, argc, argv);
  try {
    memtrace::examples::record_run(o.out, argc, argv, true);  // a fresh result each run
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_space: %s\n", e.what());
    return 1;
  }
}
