// Where Locus keeps and reads its files unless told otherwise: the one
// definition that flags, options structs, help texts and clients all use.
#ifndef LOCUS_COMMON_DEFAULTS_H_
#define LOCUS_COMMON_DEFAULTS_H_

namespace locus {

inline constexpr char kDefaultPolicyPath[] = "/etc/locus/policy.yaml";
inline constexpr char kDefaultSocketPath[] = "/run/locus/locusd.sock";
inline constexpr char kDefaultSocketGroup[] = "locus";
inline constexpr char kDefaultJournalPath[] = "/var/lib/locus/journal";
// Where sysfs and procfs are read (tests point them at fixture trees).
inline constexpr char kDefaultSysfsRoot[] = "/sys";
inline constexpr char kDefaultProcfsRoot[] = "/proc";

}  // namespace locus

#endif  // LOCUS_COMMON_DEFAULTS_H_
