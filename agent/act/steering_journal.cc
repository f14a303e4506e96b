#include "agent/act/steering_journal.h"

namespace locus {

SteeredGroup SteeredOf(const ListenKey& key) {
  return {key.netns, key.address.family, key.address.bytes, key.address.port};
}

ListenKey KeyOf(const SteeredGroup& group) {
  ListenKey key;
  key.netns = group.netns;
  key.address = {group.family, group.bytes, group.port};
  return key;
}

}  // namespace locus
