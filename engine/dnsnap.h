/*
 * dnsnap.h: the public interface of libdnsnap.
 *
 * Today this is the format layer (format/dnsnap_format.h): cache keys, the
 * entry layout, its readers and validator. The cache, the answer builder,
 * snapshots and the export stream will be declared here as they land; the CLI
 * includes only this header.
 */
#ifndef DNSNAP_H
#define DNSNAP_H

#include "dnsnap_format.h"

#define DNSNAP_VERSION "0.1.0"

#endif /* DNSNAP_H */
