// Stands in for PyTorch's libtorch.so, which exports its own (broken) copy of
// std::filesystem::remove_all: linked before libstdc++, these definitions win symbol
// lookup in the test program. They count their calls and remove nothing.
#include <filesystem>
#include <system_error>

int interposed_remove_all_calls = 0;

namespace std::filesystem {

uintmax_t remove_all(const path&, error_code& ec) {
  ++interposed_remove_all_calls;
  ec.clear();
  return 0;
}

uintmax_t remove_all(const path&) {
  ++interposed_remove_all_calls;
  return 0;
}

}  // namespace std::filesystem
