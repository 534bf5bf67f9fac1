// The fragments of docs/concepts.md, compiled by ctest (docs/design.md, "Doc snippets are
// compiled"): the static_asserts are the test.
#include <memtrace/concepts.hpp>

namespace cart {
class Cart {  // abridged from the example: the members the concepts look at
 public:
  using observation_type = Eigen::Vector2f;
  template <class G>
  observation_type reset(G& gen);  // y_0
  template <class G>
  memtrace::TimeStep<observation_type> step(memtrace::Action u, G& gen);  // y_{t+1}, r, ends
  std::size_t num_actions() const { return 2; }
};
}  // namespace cart
static_assert(memtrace::Pomdp<cart::Cart>);
static_assert(!memtrace::FiniteObservations<cart::Cart>);  // no index observations
static_assert(!memtrace::ExposedState<cart::Cart>);        // no visible state: nothing asks for it

int main() { return cart::Cart().num_actions() == 2 ? 0 : 1; }
