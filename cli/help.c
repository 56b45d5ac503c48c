/*
 * help.c: the help texts of the dnsnap tool.
 *
 * One table, one row per command: its name, the line the overview shows, and
 * the full text. The texts are the contract of the command-line interface
 * (the man page, doc/dnsnap.1, says the same at length); tests/cli/test_help.sh
 * checks that every command has one, that `dnsnap help CMD` and
 * `dnsnap CMD --help` agree, and that every line fits in 80 columns.
 */
#include <string.h>

#include "help.h"

struct help {
	const char *name;
	const char *summary; /* one line in the overview */
	const char *text;
};

static const struct help helps[] = {
{ "demo", "encode DNS responses and show the entry layout",
"usage: dnsnap demo MSG...\n"
"\n"
"Encode each file MSG, a DNS response in wire form, as the cache stores it\n"
"(at the fixed time 1700000000) and print the entry's bytes field by field, its\n"
"records as zone text and its size; end with the totals: response bytes against\n"
"key and entry bytes. A file that cannot be read or encoded is reported on\n"
"standard error and skipped.\n"
"\n"
"Exit status: 0, or 2 when any MSG could not be read or encoded.\n"
"\n"
"Example:\n"
"  dnsnap demo spec/vectors/valid/*.msg\n" },

{ "encode", "one DNS response (wire form) to a key+entry file",
"usage: dnsnap encode MSG|- [--now T] [-o OUT]\n"
"\n"
"Encode one DNS response in wire form, read from the file MSG or from standard\n"
"input (-), into its cache key and entry, and write them as a key+entry file:\n"
"Key_Len (u16, little-endian), the key, the entry; the framing of the test\n"
"vectors. A malformed or uncacheable message is refused, naming the error and\n"
"its byte offset.\n"
"\n"
"Options:\n"
"  --now T     the entry's Inception (default: now)\n"
"  -o OUT      write to the file OUT (default: standard output)\n"
"\n"
"Examples:\n"
"  dnsnap encode answer.msg --now 1700000000 -o answer.bin\n"
"  dnsnap encode - < answer.msg | dnsnap decode -\n" },

{ "decode", "validate a key+entry file and print it as zone text",
"usage: dnsnap decode FILE|-\n"
"\n"
"Read a key+entry file (as dnsnap encode writes it; - is standard input),\n"
"validate the key and every byte of the entry, and print them: comment lines\n"
"with the key and the entry's metadata, then each section's records as zone\n"
"text with their original TTLs. Bad data is reported with its error code,\n"
"whether it lies in the key or the entry, and its byte offset.\n"
"\n"
"Example:\n"
"  dnsnap decode spec/vectors/valid/001-a.bin\n" },

{ "info", "format, creation time, writer, live and expired entries, size",
"usage: dnsnap info SNAP [--json] [--now T]\n"
"\n"
"Print what snapshot SNAP says about itself: the format version, when it was\n"
"written (UTC, ISO 8601), the program that wrote it, the number of entries and\n"
"how many of them are live and expired at time T, the file size and bytes per\n"
"entry, and the digest of the entries.\n"
"\n"
"Options:\n"
"  --json      one JSON object on one line instead of text\n"
"  --now T     count live and expired entries at Unix time T (default: now)\n"
"\n"
"Examples:\n"
"  dnsnap info /var/lib/resolver/cache.snap\n"
"  dnsnap info cache.snap --json --now 1700000000\n" },

{ "stats", "entries by type, rcode, kind and tag; histograms; most hit",
"usage: dnsnap stats SNAP [--json] [--top N] [--now T]\n"
"\n"
"Describe the entries of snapshot SNAP: how many there are by query type, by\n"
"response code, positive and negative (answer, NXDOMAIN, NODATA, referral),\n"
"with DNSSEC records, and by tag; histograms of the records per entry, the\n"
"entry size in bytes and the remaining TTL at time T; and the N entries with\n"
"the most hits.\n"
"\n"
"Options:\n"
"  --json      the same as one JSON object\n"
"  --top N     list the N most-hit entries (default: 10; 0: none)\n"
"  --now T     remaining TTLs at Unix time T (default: now)\n"
"\n"
"Examples:\n"
"  dnsnap stats cache.snap\n"
"  dnsnap stats cache.snap --top 0 --json\n" },

{ "dump", "entries in key order as zone text or JSON lines, with filters",
"usage: dnsnap dump SNAP [--name NAME]... [--zone ZONE]... [--type TYPE]...\n"
"                   [--tag HEX]... [--expired] [--json] [--now T]\n"
"\n"
"Print the entries of snapshot SNAP in key order, which keeps a zone's names\n"
"together: for each entry, a comment line with its key and metadata, then its\n"
"records in zone-file presentation format with their remaining TTLs at time\n"
"T, each section labelled. A filter option may be repeated: an entry is printed\n"
"when its name is any --name or under any --zone given, its type any --type\n"
"given, and its tag any --tag given. Only live entries are printed unless\n"
"--expired is given.\n"
"\n"
"Options:\n"
"  --name NAME   the entries of exactly this domain name\n"
"  --zone ZONE   the entries of ZONE and the names below it: a range scan of\n"
"                the sorted keys, not a walk of the whole file\n"
"  --type TYPE   the entries of this query type\n"
"  --tag HEX     the entries cached under this tag ('': untagged ones)\n"
"  --expired     include the entries expired at time T\n"
"  --json        one JSON object per entry, one per line\n"
"  --now T       the time for remaining TTLs and expiry (default: now)\n"
"\n"
"Exit status: 0 when an entry was printed, 1 when none matched, 2 on bad usage\n"
"or bad data.\n"
"\n"
"Examples:\n"
"  dnsnap dump cache.snap --zone example.com\n"
"  dnsnap dump cache.snap --name www.example.com --type A --type AAAA --json\n" },

{ "get", "the answer to a query, printed as dig prints it",
"usage: dnsnap get SNAP NAME [TYPE] [--class CLASS] [--do] [--tag HEX] [--now T]\n"
"\n"
"Answer the query NAME TYPE CLASS from snapshot SNAP as a resolver would: find\n"
"its cache key and build the response with the library's answer builder (TTLs\n"
"aged to time T, DNSSEC records only with --do, sized as over TCP, so never\n"
"truncated), then print it as dig(1) prints a response.\n"
"\n"
"Options:\n"
"  TYPE            the query type (default: A)\n"
"  --class CLASS   the query class: IN, CH, HS or CLASSn (default: IN)\n"
"  --do            set the DNSSEC OK bit: RRSIGs, NSECs and the like are kept\n"
"  --tag HEX       the resolver's tag for the client (an ECS scope, a view):\n"
"                  part of the cache key (default: none)\n"
"  --now T         the Unix time of the query (default: now)\n"
"\n"
"Exit status: 0 a hit, 1 a miss (no entry, or expired at T), 2 bad usage or\n"
"bad data.\n"
"\n"
"Examples:\n"
"  dnsnap get cache.snap www.example.com AAAA\n"
"  dnsnap get cache.snap example.com DNSKEY --do\n" },

{ "verify", "the deep check: file checksum, every entry, order, count, digest",
"usage: dnsnap verify SNAP\n"
"\n"
"Check all of snapshot SNAP: the file checksum, every key and entry validated\n"
"byte by byte, the keys in order, and the entry count and digest against the\n"
"meta record. When all pass, print \"SNAP: good: N entries, digest D\";\n"
"otherwise name the first bad entry and what is wrong on standard error.\n"
"\n"
"Exit status: 0 good, 2 bad or unreadable.\n"
"\n"
"Example:\n"
"  dnsnap verify /var/lib/resolver/cache.snap\n" },

{ "load", "build or extend a snapshot from captured DNS responses",
"usage: dnsnap load SNAP INPUT... [--port N] [--now T] [--wait S]\n"
"                   [--drop-damaged]\n"
"\n"
"Build snapshot SNAP, or extend an existing one, from the DNS responses in each\n"
"INPUT: a pcap or pcapng capture (messages over UDP and TCP on port 53, or\n"
"--port), a file of TCP-framed messages (a 2-byte big-endian length, then the\n"
"message, repeated), or the text of `unbound-control dump_cache' (told by its\n"
"first line; each cached message is rebuilt from its RRsets as Unbound would\n"
"answer it); - is standard input. Queries in captures are skipped.\n"
"Each response is cached under its question as a resolver would, at time T.\n"
"The entries of SNAP live at T stay, unless a loaded response for the same key\n"
"is newer (a later Inception). Unusable messages are counted by reason and\n"
"reported on standard error; they never stop the load. The new SNAP is\n"
"published atomically, with the old file's mode, owner and group; a symbolic\n"
"link stays a link. SNAP is locked while it is read and rewritten: writers\n"
"(load, purge, import) run one at a time, none loses another's changes.\n"
"\n"
"Options:\n"
"  --port N    the DNS port to pick out of captures (default: 53)\n"
"  --now T     the Unix time the responses are cached at (default: now)\n"
"  --wait S    wait up to S seconds for another writer of SNAP (default: 60;\n"
"              0: fail at once)\n"
"  --drop-damaged  when SNAP has damaged entries, write it without them\n"
"              (without this, a damaged SNAP is left as it is: exit 2)\n"
"\n"
"Exit status: 0 SNAP published, 1 no input message was usable (nothing is\n"
"written), 2 bad usage, an unreadable input, SNAP not a regular file, a\n"
"damaged SNAP, or another writer held SNAP past --wait.\n"
"\n"
"Examples:\n"
"  dnsnap load cache.snap monday.pcap tuesday.pcapng\n"
"  dnsnap load cache.snap --port 5353 --now 1700000000 - < framed.bin\n"
"  unbound-control dump_cache | dnsnap load cache.snap -\n" },

{ "purge", "remove the entries matching filters, publish the rest",
"usage: dnsnap purge SNAP [--name NAME]... [--zone ZONE]... [--type TYPE]...\n"
"                    [--tag HEX]... [--expired] [--now T] [--dry-run]\n"
"                    [--wait S] [--drop-damaged]\n"
"\n"
"Publish a new snapshot SNAP, atomically, without the entries that match every\n"
"kind of filter given; at least one filter is required. A filter option may be\n"
"repeated: an entry matches when its name is any --name or under any --zone\n"
"given, its type any --type, its tag any --tag. Print how many entries went\n"
"and how many are left. SNAP keeps its mode, owner and group, and is locked\n"
"as load locks it (not with --dry-run).\n"
"\n"
"Options:\n"
"  --name NAME   the entries of exactly this domain name\n"
"  --zone ZONE   the entries of ZONE and the names below it (a range scan)\n"
"  --type TYPE   the entries of this query type\n"
"  --tag HEX     the entries cached under this tag ('': untagged ones)\n"
"  --expired     the entries expired at time T (alone: every expired entry)\n"
"  --now T       the time for --expired (default: now)\n"
"  --dry-run     count what would go; write nothing\n"
"  --wait S      wait up to S seconds for another writer of SNAP (default:\n"
"                60; 0: fail at once)\n"
"  --drop-damaged  when SNAP has damaged entries, write it without them\n"
"              (without this, a damaged SNAP is left as it is)\n"
"\n"
"Exit status: 0 entries removed (or, with --dry-run, would be), 1 nothing\n"
"matched (SNAP is not rewritten), 2 bad usage or bad data (damaged entries:\n"
"counted and named on standard error), or another writer held SNAP past\n"
"--wait.\n"
"\n"
"Examples:\n"
"  dnsnap purge cache.snap --zone example.com --dry-run\n"
"  dnsnap purge cache.snap --name www.example.com --type A --type AAAA\n" },

{ "export", "the portable zstd-compressed export stream, or Unbound's text",
"usage: dnsnap export SNAP -o OUT|- [--top N] [--level L]\n"
"       dnsnap export SNAP -o OUT|- --format unbound [--now T]\n"
"\n"
"Write the entries of snapshot SNAP, hit counts included, as the portable\n"
"export stream: zstd-compressed with a content checksum, independent of page\n"
"size and byte order, written in constant memory. Every key and entry is\n"
"checked before it is written. dnsnap import reads the stream. A regular file\n"
"OUT is written beside itself (OUT.tmp.PID) and renamed when whole: on error an\n"
"existing OUT is untouched and nothing is left behind. An OUT that is not a\n"
"regular file (/dev/null, a FIFO, /dev/stdout) is written in place. OUT naming\n"
"SNAP itself is refused, and so is the stream to a terminal.\n"
"\n"
"With --format unbound, write the entries live at T as the text that\n"
"`unbound-control load_cache' reads: each entry a message, its records\n"
"RRsets (each written once, however many messages share it), TTLs the time\n"
"left at T. Entries cached for CD queries or under a tag are left out; what\n"
"was written and left out is reported on standard error.\n"
"\n"
"Options:\n"
"  -o OUT      write to OUT (created mode 0600; a replaced file's mode kept),\n"
"              or - for standard output; required\n"
"  --top N     keep only the N most-hit entries, still in key order; memory\n"
"              grows with N (default: every entry)\n"
"  --level L   the zstd compression level, 1 to 19 (default: 3)\n"
"  --format F  dnsnap (the export stream, default) or unbound\n"
"  --now T     --format unbound: the Unix time TTLs count from (default: now)\n"
"\n"
"Examples:\n"
"  dnsnap export cache.snap -o cache.dnsx\n"
"  dnsnap export cache.snap -o - | ssh standby dnsnap import - -o cache.snap\n"
"  dnsnap export cache.snap --format unbound -o - | unbound-control load_cache\n" },

{ "import", "check an export stream whole, then publish it as a snapshot",
"usage: dnsnap import IN|- -o SNAP [--now T] [--wait S]\n"
"\n"
"Read an export stream from the file IN or from standard input (-), check all\n"
"of it (the zstd and stream checksums, every key and entry, the key order, the\n"
"count), and only then publish its entries as snapshot SNAP, atomically. The\n"
"entries already expired at time T are left out; hit counts carry over. On any\n"
"error nothing is written and an existing SNAP is untouched. A replaced SNAP\n"
"keeps its mode, owner and group, and is locked as load locks it. SNAP must be\n"
"a regular file (or none yet), and not IN itself.\n"
"\n"
"Options:\n"
"  -o SNAP     the snapshot to publish; required\n"
"  --now T     leave out the entries expired at Unix time T (default: now)\n"
"  --wait S    wait up to S seconds for another writer of SNAP (default: 60;\n"
"              0: fail at once)\n"
"\n"
"Examples:\n"
"  dnsnap import cache.dnsx -o /var/lib/resolver/cache.snap\n"
"  ssh primary dnsnap export cache.snap -o - | dnsnap import - -o cache.snap\n" },

{ "serve", "a cache-only DNS server (UDP, TCP) answering from a snapshot",
"usage: dnsnap serve SNAP [--listen ADDR:PORT]... [--threads N] [--now T]\n"
"\n"
"Answer DNS queries over UDP and TCP from snapshot SNAP as a resolver answers\n"
"from its cache, and from nothing else: no recursion, no forwarding. Answers\n"
"are built by the library from the entries in the map, TTLs aged to the time\n"
"of the query. Over UDP an answer is at most the client's EDNS size (512 bytes\n"
"without EDNS) and never over 1232 bytes (what BIND and Unbound send at most\n"
"by default); a longer one is cut at an RRset with TC set, and the client asks\n"
"again over TCP. Over TCP answers are whole (up to 65535 bytes), queries may\n"
"be pipelined, at most 128 connections are open (more are closed at once) and\n"
"one that sends no whole query for 10 seconds is closed.\n"
"\n"
"Replies other than answers:\n"
"  a miss            REFUSED; with EDNS, Extended DNS Error 20 (Not\n"
"                    Authoritative) \"not in cache\": the server answers only\n"
"                    what it holds (22, No Reachable Authority, would blame\n"
"                    name servers that nobody asked)\n"
"  a malformed query FORMERR, with its ID (and its question, if it parses)\n"
"  another opcode    NOTIMP\n"
"  EDNS version > 0  BADVERS, with our OPT of version 0\n"
"  under 12 bytes, or a response (QR set): no reply\n"
"\n"
"Signals: SIGHUP opens the file now at SNAP and swaps it in without dropping\n"
"a query (publish a new snapshot by renaming it over SNAP, as dnsnap's\n"
"commands do, never by rewriting SNAP in place); a file that cannot be opened\n"
"is logged and the old one kept. SIGUSR1 prints the counters on standard\n"
"error: queries (UDP, TCP), hits, misses, formerr, notimp, badvers, servfail,\n"
"dropped, truncated, TCP connections. SIGTERM and SIGINT stop the server,\n"
"print the counters and exit 0. The log (the snapshot, the addresses, swaps,\n"
"errors) goes to standard error.\n"
"\n"
"Options:\n"
"  --listen ADDR:PORT  UDP and TCP on ADDR (IPv4, or IPv6 as [ADDR]) at PORT;\n"
"                      repeatable (default: 127.0.0.1:5353); port 0: one the\n"
"                      system picks, named in the log\n"
"  --threads N         UDP threads per address, 1 to 64 (default: the number\n"
"                      of CPUs, at most 64); TCP has one thread\n"
"  --now T             answer as at Unix time T, always (default: the clock)\n"
"\n"
"Exit status: 0 after SIGTERM or SIGINT; 2 on bad usage, an unreadable SNAP or\n"
"an address that cannot be bound.\n"
"\n"
"Examples:\n"
"  dnsnap serve cache.snap --listen 127.0.0.1:53 --listen [::1]:53\n"
"  dig @127.0.0.1 -p 5353 www.example.com AAAA\n" },

{ "help", "the help of one command, or this overview",
"usage: dnsnap help [COMMAND]\n"
"       dnsnap COMMAND --help\n"
"\n"
"Without COMMAND, print the overview: the commands, the conventions, the exit\n"
"codes. With one, print that command's help, the same as dnsnap COMMAND\n"
"--help. The manual page, man dnsnap, has all of it on one page.\n"
"\n"
"Options:\n"
"  --help      after a command: that command's help; alone: the overview\n"
"  --version   print the version of dnsnap and of the format it writes\n"
"\n"
"Example:\n"
"  dnsnap help dump\n" },
};

const char *help_command(const char *cmd)
{
	if (cmd == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++)
		if (strcmp(cmd, helps[i].name) == 0)
			return helps[i].text;
	return NULL;
}

void help_overview(FILE *f)
{
	fputs("usage: dnsnap COMMAND [ARGS]\n"
	      "       dnsnap help [COMMAND] | --help | --version\n"
	      "\n"
	      "Inspect, check, load, prune, move and serve snapshots of a DNS resolver's\n"
	      "cache, and encode or decode single cache entries.\n"
	      "\n"
	      "Commands:\n", f);
	for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++)
		fprintf(f, "  %-8s %s\n", helps[i].name, helps[i].summary);
	fputs("\n"
	      "dnsnap help CMD or dnsnap CMD --help for details; man dnsnap for all of it.\n"
	      "\n"
	      "Arguments: SNAP is a snapshot file, T a time in Unix seconds, NAME and ZONE\n"
	      "domain names, TYPE a type mnemonic (A, AAAA, TXT, TYPE65280...), HEX a tag\n"
	      "in hex (up to 255 bytes).\n"
	      "\n"
	      "Exit status:\n"
	      "  0  success\n"
	      "  1  nothing found: a get miss, no entry matched (dump, purge), no usable\n"
	      "     message (load)\n"
	      "  2  bad usage or bad data; the message on standard error names the file\n"
	      "     and what is wrong. A snapshot with damaged entries: commands that\n"
	      "     read it skip them, say how many, and exit 2 (see verify)\n"
	      "\n"
	      "Writing: load, purge and import publish a snapshot by renaming a new file\n"
	      "over it, keeping its mode, owner and group (where permitted) and symbolic\n"
	      "links; they lock it while they read and rewrite it (--wait S, default 60\n"
	      "s); a path that is not a regular file is refused. Readers never lock.\n"
	      "\n"
	      "Progress: export, import, verify, purge and load show the entries done of\n"
	      "the total and the rate on standard error when it is a terminal, and are\n"
	      "silent otherwise.\n"
	      "\n"
	      "Environment: none is read. Times are printed in UTC whatever TZ says.\n", f);
}
