// A scratch directory tree for tests: a copy of a fixture that a test may
// corrupt, removed when the object goes away.
#ifndef LOCUS_TESTS_HOST_TEMP_TREE_H_
#define LOCUS_TESTS_HOST_TEMP_TREE_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/test_paths.h"

namespace locus {

class TempTree {
 public:
  TempTree() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "locus-test-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    if (made != nullptr) root_ = made;
  }
  ~TempTree() {
    std::error_code ignored;
    if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& root() const { return root_; }

  // Copies a fixture (relative to tests/fixtures) into the tree's root.
  void CopyFixture(const std::string& name) {
    std::filesystem::copy(
        std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/" + name, root_,
        std::filesystem::copy_options::recursive |
            std::filesystem::copy_options::copy_symlinks |
            std::filesystem::copy_options::overwrite_existing);
  }

  // Writes (creating parent directories) a file relative to the root.
  void Write(const std::string& relative, const std::string& content) {
    std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::trunc) << content;
  }

  void Remove(const std::string& relative) {
    std::filesystem::remove(std::filesystem::path(root_) / relative);
  }

 private:
  std::string root_;
};

inline std::string FixturePath(const std::string& name) {
  return std::string(LOCUS_SOURCE_DIR) + "/tests/fixtures/" + name;
}

}  // namespace locus

#endif  // LOCUS_TESTS_HOST_TEMP_TREE_H_
