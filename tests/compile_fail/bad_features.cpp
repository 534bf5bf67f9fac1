// Feature types a learner must refuse with a static_assert that says why. ctest compiles this
// file once with every MEMTRACE_CASE_* defined and each case's test expects its message in that
// output (as bad_parameters.cpp); without a case it must compile.
#include <Eigen/Core>
#include <memtrace/learn/td.hpp>

int main() {
  memtrace::LinearTd<double> td(3, 0.1);
  memtrace::LinearTd<float> td32(3, 0.1);
#if defined(MEMTRACE_CASE_integer_features)
  {
    const Eigen::VectorXi phi = Eigen::VectorXi::Ones(3);
    td.update(phi, 1.0, 0.9, phi);
  }
#endif
#if defined(MEMTRACE_CASE_mixed_scalar_features)
  {
    const Eigen::VectorXd phi = Eigen::VectorXd::Ones(3);
    td32.update(phi, 1.0, 0.9, phi);
  }
#endif
#if defined(MEMTRACE_CASE_matrix_features)
  {
    const Eigen::MatrixXd phi = Eigen::MatrixXd::Ones(3, 2);
    td.update(phi, 1.0, 0.9, phi);
  }
#endif
#if defined(MEMTRACE_CASE_unknown_features)
  {
    struct Opaque {};
    td.update(Opaque{}, 1.0, 0.9, Opaque{});
  }
#endif
  {  // features a learner takes: compiles whatever the cases
    const Eigen::VectorXd phi = Eigen::VectorXd::Ones(3);
    td.update(phi, 1.0, 0.9, phi);
    td32.update(Eigen::VectorXf(phi.cast<float>()), 1.0, 0.9, Eigen::VectorXf(phi.cast<float>()));
  }
  return 0;
}
