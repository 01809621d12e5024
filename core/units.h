// units.h: unit constants. Every internal quantity is in SI base units (bytes, seconds,
// FLOPs, FLOP/s, bytes/s); names carry the unit (hbm_bytes, step_time_s). Only json_io
// converts from the human units of the JSON keys (hbm_GiB, nvlink_GBps, bf16_TFLOPs).
#pragma once

namespace cutlab::units {

inline constexpr double KiB = 1024.0;
inline constexpr double MiB = 1024.0 * KiB;
inline constexpr double GiB = 1024.0 * MiB;  // binary: HBM capacities (80 GiB parts are sold as "80 GB")
inline constexpr double kB = 1e3;
inline constexpr double MB = 1e6;
inline constexpr double GB = 1e9;  // decimal: bandwidths (GB/s) and the ZeRO paper's "GB"
inline constexpr double TB = 1e12;
inline constexpr double GBps = 1e9;     // bytes per second
inline constexpr double TFLOPs = 1e12;  // FLOP per second
inline constexpr double us = 1e-6;      // seconds
inline constexpr double ms = 1e-3;

}  // namespace cutlab::units
