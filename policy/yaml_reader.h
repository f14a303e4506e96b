// YAML mapped onto a protobuf message, strictly: keys are field names,
// scalars must have the field's type (a quoted "5" is a string, not a
// number), enums are their value names in lower case without the prefix
// ("near_nic" for STRATEGY_NEAR_NIC). Internal to locus_policy_yaml.
#ifndef LOCUS_POLICY_YAML_READER_H_
#define LOCUS_POLICY_YAML_READER_H_

#include <yaml-cpp/node/node.h>

#include <string>

#include "google/protobuf/message.h"
#include "policy/yaml_errors.h"

namespace locus {

// Reads `node` into `message`, the field at `path` ("" for the top), over
// what it holds: a list in the file replaces the message's list. Every
// problem goes to `errors`, and where each field was written too.
void ReadYamlMessage(const YAML::Node& node, google::protobuf::Message* message,
                     const std::string& path, YamlErrors& errors);

}  // namespace locus

#endif  // LOCUS_POLICY_YAML_READER_H_
