#include "files/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace files {

namespace {

constexpr const char* kOwnerFile = ".owner";

std::string describe_errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Removes every entry of the open directory `fd` except `keep` (may be null).
bool remove_entries(int fd, const char* keep, std::string* error);

// Removes `name` inside the directory `dirfd`; a directory is emptied first.
bool remove_at(int dirfd, const char* name, std::string* error) {
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return true;
  if (errno != EISDIR && errno != EPERM) {
    if (error) *error = describe_errno(std::string("cannot remove ") + name);
    return false;
  }
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    if (error) *error = describe_errno(std::string("cannot open ") + name);
    return false;
  }
  bool ok = remove_entries(fd, nullptr, error);
  if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
    if (ok && error) *error = describe_errno(std::string("cannot remove the directory ") + name);
    return false;
  }
  return ok;
}

// Takes ownership of `fd` (closes it).
bool remove_entries(int fd, const char* keep, std::string* error) {
  DIR* dir = fdopendir(fd);
  if (!dir) {
    close(fd);
    if (error) *error = describe_errno("cannot read a directory");
    return false;
  }
  bool ok = true;
  while (dirent* e = readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0 ||
        (keep && std::strcmp(e->d_name, keep) == 0))
      continue;
    ok = remove_at(dirfd(dir), e->d_name, error) && ok;
  }
  closedir(dir);
  return ok;
}

}  // namespace

// Empties a dead owner's tree, its lock file last: if something still writes into it (a
// compiler orphaned with the owner), the lock file stays and the next sweep tries again.
bool remove_owned_tree(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  return remove_entries(fd, kOwnerFile, nullptr) && remove_tree(path);
}

bool remove_tree(const std::string& path, std::string* error) {
  if (path.empty() || path == "/") {
    if (error) *error = "refusing to remove '" + path + "'";
    return false;
  }
  return remove_at(AT_FDCWD, path.c_str(), error);
}

std::string temp_base() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

// Made under a hidden name, locked, then renamed into view: a sweeper never sees a
// visible directory whose lock is not yet taken.
OwnedDir::OwnedDir(const std::string& base, const std::string& prefix) {
  std::string hidden = base + "/." + prefix + "-XXXXXX";
  if (!mkdtemp(hidden.data())) throw std::runtime_error(describe_errno("cannot create a directory in " + base));
  const std::string visible = base + "/" + hidden.substr(base.size() + 2);
  int fd = open((hidden + "/" + kOwnerFile).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0 || rename(hidden.c_str(), visible.c_str()) != 0) {
    std::string why = describe_errno("cannot set up " + visible);
    if (fd >= 0) close(fd);
    remove_tree(hidden);
    throw std::runtime_error(why);
  }
  path_ = visible;
  lock_fd_ = fd;
}

OwnedDir::~OwnedDir() { remove(); }

OwnedDir& OwnedDir::operator=(OwnedDir&& o) noexcept {
  if (this != &o) {
    remove();
    std::swap(path_, o.path_);
    std::swap(lock_fd_, o.lock_fd_);
  }
  return *this;
}

void OwnedDir::remove() {
  if (!path_.empty()) remove_tree(path_);  // the lock file goes last of all: still ours
  if (lock_fd_ >= 0) close(lock_fd_);
  path_.clear();
  lock_fd_ = -1;
}

int sweep_orphans(const std::string& base, const std::string& prefix, double grace_s) {
  DIR* dir = opendir(base.c_str());
  if (!dir) return 0;
  const std::string start = prefix + "-", hidden = "." + prefix + "-";
  int removed = 0;
  while (dirent* e = readdir(dir)) {
    const bool in_view = std::strncmp(e->d_name, start.c_str(), start.size()) == 0;
    if (!in_view && std::strncmp(e->d_name, hidden.c_str(), hidden.size()) != 0) continue;
    const std::string path = base + "/" + e->d_name;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    int fd = in_view ? open((path + "/" + kOwnerFile).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0) {
      // Still hidden, or no lock file: an owner that died while setting up, unless young.
      if (std::difftime(std::time(nullptr), st.st_mtime) > grace_s) removed += remove_tree(path);
      continue;
    }
    // Holding the dead owner's lock while removing keeps a second sweeper off the tree.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) removed += remove_owned_tree(path);
    close(fd);
  }
  closedir(dir);
  return removed;
}

}  // namespace files
