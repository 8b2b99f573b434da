// db/file_stamps.h — the digests of committed files without reading them when they did not change: the store
// remembers each digest with the files' stat stamp (schema/migrations/0003_file_stamps.sql), and a command
// that syncs data/ re-reads and re-hashes only files whose stamp differs.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace archdb {

class Store;

// size, mtime and ctime (ns), inode and device of each file ("-" for one that is missing), one line each.
std::string stat_stamp(const std::vector<std::filesystem::path>& files);

// The digest `compute` gives for `files`, taken from the store when their stamp is the one remembered under
// `key`; otherwise computed and, when the files were last changed more than two seconds ago, remembered.
std::string stamped_digest(Store& store, const std::string& key, const std::vector<std::filesystem::path>& files,
                           const std::function<std::string()>& compute);

}  // namespace archdb
