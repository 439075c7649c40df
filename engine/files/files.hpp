// Directory trees the engine makes and removes, written on the POSIX calls themselves.
//
// Not std::filesystem: PyTorch's libtorch.so exports its own copy of
// std::filesystem::remove_all (linked in from its toolchain's static libstdc++ part), and
// a library loaded before libstdc++ wins symbol lookup, so in an engine linked against it
// every remove_all call bound to that copy, which jumps to address 0 on a non-empty
// directory. Nothing here can be interposed that way.
#pragma once

#include <string>

namespace files {

// Removes `path` and everything below it, never following symbolic links. True when
// nothing is left (also when there was nothing); `error` says what could not be removed.
bool remove_tree(const std::string& path, std::string* error = nullptr);

// A private directory `base/PREFIX-XXXXXX` that belongs to this process while it lives:
// it holds a lock (flock on `base/PREFIX-XXXXXX/.owner`) that the kernel releases when
// the process ends, however it ends. Moving it keeps the lock; so does fork (children
// share it, and close their copy of the descriptor, which is close-on-exec).
class OwnedDir {
 public:
  OwnedDir() = default;
  OwnedDir(const std::string& base, const std::string& prefix);  // throws std::runtime_error
  ~OwnedDir();
  OwnedDir(OwnedDir&& o) noexcept { *this = std::move(o); }
  OwnedDir& operator=(OwnedDir&& o) noexcept;
  const std::string& path() const { return path_; }
  int lock_fd() const { return lock_fd_; }
  void remove();  // the tree and the lock; the directory is gone afterwards

 private:
  std::string path_;
  int lock_fd_ = -1;
};

// Removes every `base/PREFIX-*` directory whose owner has ended (its lock is free), and
// directories still being set up (hidden, or without a lock file) that are older than
// `grace_s` seconds (an owner that died while making it). Safe beside live owners, in this or
// any other process or container sharing `base`. Returns how many were removed.
int sweep_orphans(const std::string& base, const std::string& prefix, double grace_s = 60);

// $TMPDIR, or /tmp.
std::string temp_base();

}  // namespace files
