/*
 * realmix.c: the realistic resolver-cache mix. See realmix.h.
 *
 * The generator:
 * - PRNG: xorshift64* seeded with mix_splitmix64(seed + i * golden ratio), as in
 *   mix.c. The zone of group g = i / 4 has its own stream, seeded from
 *   (seed, g): every entry of the group rebuilds the same zone.
 * - Zones: 88% are sites, WORD WORD [N] . SUFFIX ("bluecloud.com",
 *   "gold-harbor2.de", 10% hyphenated): 256 prefix-free words, so a
 *   concatenation reads back one way; group g picks the pair (g mod 65536)
 *   through a keyed bijection and N = g / 65536 (none for 0): distinct groups
 *   have distinct zones.
 *   Suffixes are weighted as in mix.c. 12% of zones are a CDN or cloud
 *   provider's (cloudfront.net, akamaiedge.net, amazonaws.com,
 *   googleusercontent.com, fastly.net) and their names carry a token made
 *   from i itself (a bijection), so they are distinct too.
 * - Names in a site group: slot s = i % 4 picks the owner from its own set of
 *   labels, disjoint from the other slots' sets (apex and "web" for slot 0,
 *   "www" for 1, service hosts for 2, others for 3; DMARC in slot 1, DKIM
 *   selectors split between 2 and 3, NXDOMAIN labels per slot): two entries
 *   of a group never share a name unless they are the same entry.
 * - Each zone draws its DNS host (Route 53 30%, Cloudflare 30%, GoDaddy 15%,
 *   NS1 5%, self-hosted 20%: its NS names and SOA shape), its mail host
 *   (Google 40%, Microsoft 365 30%, self-hosted 15%, Mimecast, Proofpoint,
 *   Zoho 5% each), and, if signed, its algorithm and key tags.
 * - Kinds are drawn per entry (per mille): A 320, AAAA 160, CNAME chain 150,
 *   TXT 100, MX 40, NS 30 (an apex NS answer in slot 0, a referral elsewhere),
 *   NXDOMAIN 60, NODATA 40, signed 100 (in slot 0: DNSKEY 35%, DS 20%, a signed
 *   answer 45%). Provider zones turn CNAME, TXT, MX, NS and signed draws into
 *   A (2/3) or AAAA (1/3).
 */
#include "realmix.h"
#include "mix.h"

#include <stdio.h>
#include <string.h>

#define T_A 1
#define T_NS 2
#define T_CNAME 5
#define T_SOA 6
#define T_MX 15
#define T_TXT 16
#define T_AAAA 28
#define T_DS 43
#define T_RRSIG 46
#define T_DNSKEY 48
#define T_HTTPS 65
#define T_OPT 41

static uint64_t rm_seed = 0x7265616c6d697821ull;

void realmix_init(uint64_t seed)
{
	rm_seed = seed;
}

/* Uniform in [0, n), n small. */
static unsigned below(uint64_t *s, unsigned n)
{
	return (unsigned)(((mix_rand(s) >> 32) * n) >> 32);
}

/* A keyed bijection on 32 bits (lowbias32): tokens that do not look consecutive. */
static uint32_t perm32(uint32_t x)
{
	x ^= (uint32_t)rm_seed;
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* ----------------------------------------------------------------- names */

typedef struct nm {
	uint8_t b[255];
	size_t n;
	int err;
} nm_t;

static void nm_label(nm_t *m, const char *s, size_t len)
{
	if (m->err || len == 0 || len > 63 || m->n + 1 + len > 254) {
		m->err = 1;
		return;
	}
	m->b[m->n++] = (uint8_t)len;
	memcpy(m->b + m->n, s, len);
	m->n += len;
}

/* Append "a.b.c" as labels ("" appends nothing). */
static void nm_dotted(nm_t *m, const char *s)
{
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t len = dot ? (size_t)(dot - s) : strlen(s);
		nm_label(m, s, len);
		s += len + (dot != NULL);
	}
}

/* Append a whole name (ending with the root): the name is then complete. */
static void nm_cat(nm_t *m, const nm_t *tail)
{
	if (m->err || tail->err || m->n + tail->n > 255) {
		m->err = 1;
		return;
	}
	memcpy(m->b + m->n, tail->b, tail->n);
	m->n += tail->n;
}

/* dotted + root */
static void nm_full(nm_t *m, const char *dotted)
{
	nm_dotted(m, dotted);
	if (m->n + 1 > 255)
		m->err = 1;
	else
		m->b[m->n++] = 0;
}

static unsigned nm_labels(const nm_t *m)
{
	unsigned k = 0;
	for (size_t p = 0; p < m->n && m->b[p] != 0; p += 1u + m->b[p])
		k++;
	return k;
}

/* A small string builder for TXT rdata and labels. */
typedef struct sb {
	char b[1024];
	size_t n;
} sb_t;

static void sb_cat(sb_t *s, const char *t)
{
	size_t k = strlen(t);
	if (s->n + k >= sizeof s->b)
		k = sizeof s->b - 1 - s->n;
	memcpy(s->b + s->n, t, k);
	s->n += k;
	s->b[s->n] = 0;
}

static void sb_fmt(sb_t *s, const char *fmt, unsigned long long v)
{
	char t[64];
	snprintf(t, sizeof t, fmt, v);
	sb_cat(s, t);
}

/* n random characters from @p alphabet */
static void sb_rand(sb_t *s, uint64_t *st, const char *alphabet, size_t n)
{
	unsigned k = (unsigned)strlen(alphabet);
	for (size_t j = 0; j < n && s->n + 1 < sizeof s->b; j++)
		s->b[s->n++] = alphabet[below(st, k)];
	s->b[s->n] = 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char ALNUM_LC[] = "abcdefghijklmnopqrstuvwxyz0123456789";
static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char HEX[] = "0123456789abcdef";
static const char LOWER[] = "abcdefghijklmnopqrstuvwxyz";
static const char DIGITS[] = "0123456789";

/* ----------------------------------------------------------------- tables */

/* Prefix-free: no word begins another, so WORD WORD splits one way. */
static const char *const words[256] = {
	"blue", "cloud", "fast", "pay", "soft", "data", "tech", "smart", "home", "shop", "news",
	"mail", "web", "net", "link", "box", "hub", "lab", "green", "red", "gold", "star", "sun",
	"moon", "sky", "sea", "river", "lake", "stone", "rock", "fire", "ice", "snow", "rain",
	"wind", "storm", "bright", "cyber", "digital", "micro", "mega", "nova", "prime", "true",
	"open", "free", "wise", "bold", "swift", "quick", "easy", "city", "town", "metro",
	"urban", "global", "world", "planet", "earth", "ocean", "coast", "bay", "port", "harbor",
	"bridge", "road", "path", "trail", "way", "route", "map", "guide", "point", "spot",
	"zone", "base", "camp", "field", "farm", "garden", "tree", "leaf", "root", "seed",
	"bloom", "rose", "lily", "pine", "oak", "cedar", "birch", "apple", "berry", "cherry",
	"lemon", "mango", "peach", "plum", "grape", "coffee", "tea", "bread", "cake", "candy",
	"honey", "sugar", "salt", "pepper", "spice", "kitchen", "table", "chair", "desk", "door",
	"wall", "roof", "tower", "castle", "king", "queen", "royal", "noble", "grand", "great",
	"big", "little", "tiny", "mini", "max", "plus", "pro", "expert", "master", "chief",
	"crew", "club", "group", "union", "alliance", "partner", "friend", "family", "people",
	"health", "care", "med", "clinic", "doctor", "dental", "vision", "life", "fit", "gym",
	"sport", "game", "play", "fun", "joy", "happy", "lucky", "music", "sound", "audio",
	"video", "photo", "pixel", "film", "movie", "studio", "press", "story", "book", "page",
	"word", "text", "code", "dev", "byte", "bit", "mobile", "phone", "call", "talk", "chat",
	"social", "share", "trade", "market", "store", "deal", "sale", "buy", "sell", "price",
	"cost", "money", "bank", "cash", "coin", "credit", "invest", "capital", "wealth",
	"travel", "trip", "tour", "hotel", "stay", "room", "house", "land", "estate", "build",
	"craft", "design", "art", "style", "fashion", "wear", "shoe", "bag", "watch", "jewel",
	"ring", "gem", "diamond", "silver", "iron", "steel", "metal", "wood", "paper", "glass",
	"print", "auto", "motor", "drive", "ride", "bike", "wheel", "fleet", "ship", "cargo",
	"freight", "express", "post", "send", "deliver", "school", "learn", "study", "class",
	"course", "academy", "college", "student",
};

static const struct {
	const char *text;
	unsigned weight;
	unsigned alg;       /* the TLD's DNSSEC algorithm, for DS signatures */
} suffixes[] = {
	{"com", 46, 13}, {"net", 9, 13}, {"org", 8, 8}, {"de", 7, 8}, {"co.uk", 5, 8},
	{"io", 5, 8}, {"ru", 4, 8}, {"nl", 3, 13}, {"fr", 3, 13}, {"com.br", 3, 13},
	{"jp", 3, 8}, {"info", 2, 8}, {"eu", 2, 8},
};
#define NSUFFIX (sizeof suffixes / sizeof suffixes[0])

enum { PROV_CLOUDFRONT, PROV_AKAMAI, PROV_AWS, PROV_GOOGLE, PROV_FASTLY, NPROV };
static const char *const prov_zone[NPROV] = {
	"cloudfront.net", "akamaiedge.net", "amazonaws.com", "googleusercontent.com", "fastly.net",
};

enum { NS_ROUTE53, NS_CLOUDFLARE, NS_GODADDY, NS_NS1, NS_SELF };
enum { MX_GOOGLE, MX_MICROSOFT, MX_SELF, MX_MIMECAST, MX_PROOFPOINT, MX_ZOHO };

static const char *const cf_names[32] = {
	"ada", "bob", "carl", "dana", "elle", "fred", "gina", "hank", "iris", "jake", "kara",
	"lana", "mark", "nina", "owen", "pam", "quinn", "rob", "sara", "tom", "uma", "vick",
	"walt", "xena", "yew", "zod", "adam", "beth", "chad", "dee", "emma", "finn",
};

/* Slot s's owner labels: no label appears in two slots (see the top). */
static const char *const hosts2[8] = { "api", "mail", "cdn", "static", "img", "m", "app", "login" };
static const char *const hosts3[8] = { "shop", "blog", "news", "docs", "status", "support",
				       "assets", "video" };
static const char *const dkim2[4] = { "google", "selector1", "s1", "k1" };
static const char *const dkim3[4] = { "selector2", "s2", "default", "mandrill" };
static const struct {
	const char *label; /* NULL: a random label (letters from the slot's range, a digit) */
	uint16_t qtype;
} nxnames[4][4] = {
	{ {"wpad", T_A}, {"_mta-sts", T_TXT}, {"_dmarc.mail", T_TXT}, {NULL, T_A} },
	{ {"isatap", T_A}, {"_domainkey", T_TXT}, {"autoconfig", T_A}, {NULL, T_AAAA} },
	{ {"localhost", T_A}, {"_adsp._domainkey", T_TXT}, {"ww", T_AAAA}, {NULL, T_HTTPS} },
	{ {"wwww", T_A}, {"_smtp._tls", T_TXT}, {"_443._tcp.www", 52 /* TLSA */}, {NULL, T_A} },
};

/* Hosting /16s for site addresses. */
static const uint8_t v4pre[32][2] = {
	{104, 21}, {172, 67}, {104, 18}, {3, 33}, {52, 6}, {54, 230}, {13, 107}, {34, 120},
	{35, 186}, {142, 250}, {151, 101}, {185, 199}, {199, 59}, {198, 185}, {162, 159},
	{23, 185}, {45, 60}, {66, 42}, {69, 16}, {64, 190}, {217, 160}, {81, 169}, {94, 130},
	{46, 4}, {5, 9}, {188, 114}, {95, 217}, {37, 187}, {178, 62}, {212, 227}, {91, 195},
	{76, 76},
};
static const uint8_t v6pre[12][6] = {
	{0x26, 0x06, 0x47, 0x00, 0x30, 0x30}, {0x26, 0x00, 0x1f, 0x18, 0x00, 0x00},
	{0x2a, 0x00, 0x14, 0x50, 0x40, 0x01}, {0x26, 0x20, 0x01, 0xec, 0x00, 0x0c},
	{0x2a, 0x04, 0x4e, 0x42, 0x00, 0x00}, {0x20, 0x01, 0x48, 0x60, 0x48, 0x02},
	{0x2a, 0x01, 0x04, 0xf8, 0x0c, 0x17}, {0x2a, 0x03, 0x28, 0x80, 0xf1, 0x0c},
	{0x26, 0x04, 0xa8, 0x80, 0x04, 0x00}, {0x2a, 0x02, 0x47, 0x80, 0x00, 0x0b},
	{0x20, 0x01, 0x41, 0xd0, 0x03, 0x02}, {0x24, 0x00, 0xcb, 0x00, 0x20, 0x49},
};

static const uint32_t ttl_addr[12] = { 60, 300, 300, 300, 600, 1800, 3600, 3600, 3600, 7200,
				       14400, 86400 };
static const uint32_t ttl_other[8] = { 300, 1800, 3600, 3600, 3600, 14400, 43200, 86400 };

/* ----------------------------------------------------------------- zones */

typedef struct grp {
	int prov;                /* -1: a site; else PROV_* */
	unsigned sfx;            /* suffixes[] */
	char label[48];          /* the site's registered label */
	char text[64];           /* the zone, dotted ("bluecloud.com") */
	nm_t dom;                /* the zone apex */
	unsigned ns_kind, mx_kind;
	unsigned ns_num[4];      /* Route 53 / Cloudflare / GoDaddy / NS1 numbers */
	unsigned alg;            /* 13 or 8 */
	uint16_t zsk, ksk, ksk2;
	uint32_t serial;
	uint32_t proof_id;       /* Proofpoint's customer number */
	uint64_t sig_seed;       /* the zone's signing times come from this */
} grp_t;

static void group(size_t g, grp_t *z)
{
	uint64_t st = mix_splitmix64(rm_seed ^ 0x67726f75706d6978ull ^
				 (uint64_t)g * 0xd1b54a32d192ed03ull) | 1;
	memset(z, 0, sizeof *z);
	z->prov = below(&st, 100) < 12 ? (int)below(&st, NPROV) : -1;
	unsigned w = below(&st, 100), k = 0;
	while (w >= suffixes[k].weight)
		w -= suffixes[k++].weight;
	z->sfx = k;
	if (z->prov < 0) {
		/* (w1, w2) = a keyed bijection of g mod 65536; N = g / 65536 */
		uint32_t p = (uint32_t)(g & 0xffff), n = (uint32_t)(g >> 16);
		p = (p * 40503u + (uint32_t)(rm_seed >> 7)) & 0xffff;
		const char *w1 = words[p >> 8], *w2 = words[p & 0xff];
		int hy = below(&st, 100) < 10;
		if (n)
			snprintf(z->label, sizeof z->label, "%s%s%s%u", w1, hy ? "-" : "", w2,
				 (unsigned)n);
		else
			snprintf(z->label, sizeof z->label, "%s%s%s", w1, hy ? "-" : "", w2);
		snprintf(z->text, sizeof z->text, "%s.%s", z->label, suffixes[k].text);
	} else {
		snprintf(z->text, sizeof z->text, "%s", prov_zone[z->prov]);
	}
	nm_full(&z->dom, z->text);
	unsigned d = below(&st, 100);
	z->ns_kind = d < 30 ? NS_ROUTE53 : d < 60 ? NS_CLOUDFLARE : d < 75 ? NS_GODADDY
		     : d < 80 ? NS_NS1 : NS_SELF;
	if (z->prov == PROV_CLOUDFRONT || z->prov == PROV_AWS)
		z->ns_kind = NS_ROUTE53;
	else if (z->prov >= 0)
		z->ns_kind = NS_SELF;
	unsigned m = below(&st, 100);
	z->mx_kind = m < 40 ? MX_GOOGLE : m < 70 ? MX_MICROSOFT : m < 85 ? MX_SELF
		     : m < 90 ? MX_MIMECAST : m < 95 ? MX_PROOFPOINT : MX_ZOHO;
	for (int j = 0; j < 4; j++)
		z->ns_num[j] = (unsigned)(mix_rand(&st) >> 40);
	z->alg = below(&st, 100) < 70 ? 13 : 8;
	z->zsk = (uint16_t)mix_rand(&st);
	z->ksk = (uint16_t)mix_rand(&st);
	z->ksk2 = (uint16_t)mix_rand(&st);
	z->serial = z->ns_kind == NS_ROUTE53 ? 1
		    : z->ns_kind == NS_CLOUDFLARE ? 2300000000u + below(&st, 50000000)
		    : (2019 + below(&st, 5)) * 1000000u + (1 + below(&st, 12)) * 10000u +
		      (1 + below(&st, 28)) * 100u + below(&st, 10); /* YYYYMMDDnn */
	z->proof_id = 100000 + below(&st, 900000);
	z->sig_seed = mix_rand(&st);
}

/* ----------------------------------------------------------------- entries */

typedef struct ent {
	uint64_t st;             /* the entry's stream, continued by the response */
	size_t i;
	grp_t g;
	unsigned slot, kind;
	unsigned sub;            /* a shape within the kind */
	nm_t q;
	uint16_t qtype, id;
} ent_t;

/* The owner a site entry of slot s uses for ordinary records. */
static void host_name(const ent_t *e, nm_t *out, int cname)
{
	memset(out, 0, sizeof *out);
	switch (e->slot) {
	case 0:
		if (cname)
			nm_dotted(out, "web"); /* no CNAME at a zone apex */
		break;
	case 1:
		nm_dotted(out, "www");
		break;
	case 2:
		nm_dotted(out, hosts2[e->sub & 7]);
		break;
	default:
		nm_dotted(out, hosts3[e->sub & 7]);
		break;
	}
	nm_cat(out, &e->g.dom);
}

/* The address in an AWS or Google Cloud host name, from i's low bits: AWS, a
 * /16 (bits 16-20; the region is bits 21-23) and 16 scrambled bits; Google,
 * 34 or 35 (bit 24), bits 16-23, 16 scrambled bits. Distinct for i < 2^24. */
static void provider_ip(const ent_t *e, uint8_t ip[4])
{
	static const uint8_t aws[32][2] = {
		{3, 80}, {3, 91}, {3, 208}, {18, 204}, {18, 206}, {18, 232}, {34, 192},
		{34, 224}, {35, 153}, {35, 171}, {44, 192}, {44, 201}, {50, 16}, {52, 0},
		{52, 14}, {52, 55}, {52, 70}, {52, 91}, {54, 80}, {54, 144}, {54, 152},
		{54, 159}, {54, 173}, {54, 196}, {54, 205}, {54, 210}, {54, 226}, {54, 234},
		{3, 120}, {13, 48}, {13, 228}, {15, 160},
	};
	/* a bijection of the low 16 bits, keyed by the rest */
	uint32_t lo = ((uint32_t)e->i * 40503u + (uint32_t)(e->i >> 16) * 2654435761u) & 0xffff;
	if (e->g.prov == PROV_AWS) {
		const uint8_t *p = aws[(e->i >> 16) & 31];
		ip[0] = p[0], ip[1] = p[1];
	} else {
		ip[0] = (uint8_t)(34 + ((e->i >> 24) & 1));
		ip[1] = (uint8_t)(e->i >> 16);
	}
	ip[2] = (uint8_t)(lo >> 8), ip[3] = (uint8_t)lo;
}

/* A provider's own name for entry i: a token made from i (distinct per i). */
static void provider_name(const ent_t *e, nm_t *out)
{
	char lab[64];
	uint32_t t = perm32((uint32_t)e->i);
	memset(out, 0, sizeof *out);
	switch (e->g.prov) {
	case PROV_CLOUDFRONT: {
		/* d + 13 characters: the token in base 36, then characters derived from it */
		char *p = lab;
		*p++ = 'd';
		uint64_t v = t, h = mix_splitmix64(t);
		for (int j = 0; j < 7; j++, v /= 36)
			*p++ = ALNUM_LC[v % 36];
		for (int j = 0; j < 6; j++, h >>= 6)
			*p++ = ALNUM_LC[(h & 63) % 36];
		*p = 0;
		nm_dotted(out, lab);
		break;
	}
	case PROV_AKAMAI: {
		static const char *const sub[4] = { "a", "b", "dscx", "dscb" };
		snprintf(lab, sizeof lab, "e%u.%s", (unsigned)t, sub[(t >> 3) & 3]);
		nm_dotted(out, lab);
		break;
	}
	case PROV_AWS: {
		static const char *const reg[8] = { "compute-1", "us-west-2.compute",
			"eu-west-1.compute", "eu-central-1.compute", "ap-southeast-1.compute",
			"ap-northeast-1.compute", "us-east-2.compute", "sa-east-1.compute" };
		uint8_t ip[4];
		provider_ip(e, ip);
		snprintf(lab, sizeof lab, "ec2-%u-%u-%u-%u.%s", ip[0], ip[1], ip[2], ip[3],
			 reg[(e->i >> 21) & 7]);
		nm_dotted(out, lab);
		break;
	}
	case PROV_GOOGLE: {
		uint8_t ip[4];
		provider_ip(e, ip);
		snprintf(lab, sizeof lab, "%u.%u.%u.%u.bc", ip[3], ip[2], ip[1], ip[0]);
		nm_dotted(out, lab);
		break;
	}
	default: {
		char *p = lab;
		uint64_t v = t;
		for (int j = 0; j < 7; j++, v /= 36)
			*p++ = ALNUM_LC[v % 36];
		*p = 0;
		strcat(lab, ".global.ssl");
		nm_dotted(out, lab);
		break;
	}
	}
	nm_cat(out, &e->g.dom);
}

static void gen(size_t i, ent_t *e)
{
	memset(e, 0, sizeof *e);
	e->i = i;
	e->st = mix_splitmix64(rm_seed + (uint64_t)i * 0x9e3779b97f4a7c15ull) | 1;
	uint64_t *st = &e->st;
	group(i / 4, &e->g);
	e->slot = (unsigned)(i % 4);
	unsigned u = below(st, 1000);
	static const struct { unsigned upto, kind; } cut[] = {
		{320, REALMIX_A}, {480, REALMIX_AAAA}, {630, REALMIX_CNAME}, {730, REALMIX_TXT},
		{770, REALMIX_MX}, {800, REALMIX_NS}, {860, REALMIX_NXDOMAIN},
		{900, REALMIX_NODATA}, {1000, REALMIX_SIGNED},
	};
	unsigned k = 0;
	while (u >= cut[k].upto)
		k++;
	e->kind = cut[k].kind;
	e->sub = (unsigned)(mix_rand(st) >> 40);
	if (e->g.prov >= 0) {
		if (e->kind != REALMIX_A && e->kind != REALMIX_AAAA &&
		    e->kind != REALMIX_NXDOMAIN && e->kind != REALMIX_NODATA)
			e->kind = e->sub % 3 == 2 ? REALMIX_AAAA : REALMIX_A;
		provider_name(e, &e->q);
		e->qtype = e->kind == REALMIX_AAAA ? T_AAAA : e->kind == REALMIX_NODATA
			   ? (e->sub & 1 ? T_HTTPS : T_AAAA) : T_A;
		e->id = (uint16_t)mix_rand(st);
		return;
	}
	if (e->kind == REALMIX_NS && e->slot != 0)
		e->kind = REALMIX_REFERRAL;
	if (e->kind == REALMIX_SIGNED && e->slot == 0) {
		unsigned s = e->sub % 20;
		if (s < 7)
			e->kind = REALMIX_DNSKEY;
		else if (s < 11)
			e->kind = REALMIX_DS;
	}
	switch (e->kind) {
	case REALMIX_A:
	case REALMIX_AAAA:
		host_name(e, &e->q, 0);
		e->qtype = e->kind == REALMIX_A ? T_A : T_AAAA;
		break;
	case REALMIX_CNAME:
		host_name(e, &e->q, 1);
		e->qtype = (e->sub >> 8) % 3 == 2 ? T_AAAA : T_A;
		break;
	case REALMIX_TXT:
		switch (e->slot) {
		case 0:
			nm_cat(&e->q, &e->g.dom);
			break;
		case 1:
			nm_dotted(&e->q, "_dmarc");
			nm_cat(&e->q, &e->g.dom);
			break;
		default:
			nm_dotted(&e->q, (e->slot == 2 ? dkim2 : dkim3)[e->sub & 3]);
			nm_dotted(&e->q, "_domainkey");
			nm_cat(&e->q, &e->g.dom);
			break;
		}
		e->qtype = T_TXT;
		break;
	case REALMIX_MX:
		host_name(e, &e->q, 0);
		e->qtype = T_MX;
		break;
	case REALMIX_NS:
		host_name(e, &e->q, 0);
		e->qtype = T_NS;
		break;
	case REALMIX_REFERRAL:
		host_name(e, &e->q, 0);
		e->qtype = (e->sub >> 8) % 3 == 2 ? T_AAAA : T_A;
		break;
	case REALMIX_NXDOMAIN: {
		unsigned x = (e->sub >> 8) & 3;
		const char *lab = nxnames[e->slot][x].label;
		if (lab != NULL) {
			nm_dotted(&e->q, lab);
		} else {
			/* letters from the slot's quarter of the alphabet first, a digit last */
			sb_t s = { .n = 0 };
			s.b[s.n++] = (char)('a' + 6 * e->slot + below(st, 6));
			sb_rand(&s, st, LOWER, 6 + below(st, 8));
			sb_rand(&s, st, DIGITS, 1);
			nm_dotted(&e->q, s.b);
		}
		nm_cat(&e->q, &e->g.dom);
		e->qtype = nxnames[e->slot][x].qtype;
		break;
	}
	case REALMIX_NODATA: {
		static const uint16_t t[8] = { T_HTTPS, T_HTTPS, T_HTTPS, T_HTTPS, T_AAAA, T_AAAA,
					       T_AAAA, T_MX };
		host_name(e, &e->q, 0);
		e->qtype = t[(e->sub >> 8) & 7];
		break;
	}
	case REALMIX_SIGNED: {
		static const uint16_t t[8] = { T_A, T_A, T_A, T_A, T_AAAA, T_AAAA, T_TXT, T_MX };
		host_name(e, &e->q, 0);
		e->qtype = t[(e->sub >> 8) & 7];
		if (e->qtype == T_TXT && e->slot != 0)
			e->qtype = T_A; /* SPF lives at the apex */
		break;
	}
	case REALMIX_DNSKEY:
		nm_cat(&e->q, &e->g.dom);
		e->qtype = T_DNSKEY;
		break;
	default: /* REALMIX_DS */
		nm_cat(&e->q, &e->g.dom);
		e->qtype = T_DS;
		break;
	}
	e->id = (uint16_t)mix_rand(st);
}

unsigned realmix_kind(size_t i)
{
	ent_t e;
	gen(i, &e);
	return e.kind;
}

const char *realmix_kind_name(unsigned kind)
{
	static const char *const names[REALMIX_KINDS] = {
		"A", "AAAA", "CNAME chain", "TXT", "MX", "NS", "referral", "NXDOMAIN", "NODATA",
		"signed answer", "DNSKEY", "DS",
	};
	return kind < REALMIX_KINDS ? names[kind] : "?";
}

uint16_t realmix_qtype(size_t i)
{
	ent_t e;
	gen(i, &e);
	return e.qtype;
}

size_t realmix_name(size_t i, uint8_t out[255])
{
	ent_t e;
	gen(i, &e);
	memcpy(out, e.q.b, e.q.n);
	return e.q.n;
}

/* ----------------------------------------------------------------- messages */

typedef struct msg {
	uint8_t *p;
	size_t cap, n;
	int err;
	unsigned an, ns, ar;
	/* name compression: label starts written so far, and their suffixes */
	struct { uint16_t off; uint16_t len; const uint8_t *sfx; } tab[128];
	unsigned ntab;
	uint8_t names[8192];     /* copies of the names the table points into */
	size_t names_n;
} msg_t;

static void m_bytes(msg_t *m, const void *p, size_t n)
{
	if (m->err || m->cap - m->n < n) {
		m->err = 1;
		return;
	}
	memcpy(m->p + m->n, p, n);
	m->n += n;
}

static void m_u8(msg_t *m, unsigned v)
{
	uint8_t b = (uint8_t)v;
	m_bytes(m, &b, 1);
}

static void m_u16(msg_t *m, unsigned v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	m_bytes(m, b, 2);
}

static void m_u32(msg_t *m, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	m_bytes(m, b, 4);
}

/* Write a name; with @p compress, its longest suffix already written becomes a
 * pointer (RFC 1035 4.1.4), and its own labels become pointer targets. */
static void m_name(msg_t *m, const nm_t *nm, int compress)
{
	if (nm->err) {
		m->err = 1;
		return;
	}
	size_t k = 0;
	int ptr = -1;
	for (; nm->b[k] != 0; k += 1u + nm->b[k]) {
		if (!compress)
			continue;
		size_t sl = nm->n - k;
		for (unsigned j = 0; j < m->ntab && ptr < 0; j++)
			if (m->tab[j].len == sl && memcmp(m->tab[j].sfx, nm->b + k, sl) == 0)
				ptr = m->tab[j].off;
		if (ptr >= 0)
			break;
	}
	const uint8_t *copy = NULL;
	if (compress && k > 0 && m->names_n + nm->n <= sizeof m->names) {
		copy = m->names + m->names_n;
		memcpy(m->names + m->names_n, nm->b, nm->n);
		m->names_n += nm->n;
	}
	for (size_t l = 0; l < k; l += 1u + nm->b[l]) {
		if (copy && m->n + l < 0x3fff && m->ntab < 128) {
			m->tab[m->ntab].off = (uint16_t)(m->n + l);
			m->tab[m->ntab].len = (uint16_t)(nm->n - l);
			m->tab[m->ntab].sfx = copy + l;
			m->ntab++;
		}
	}
	m_bytes(m, nm->b, k);
	if (ptr >= 0)
		m_u16(m, 0xc000u | (unsigned)ptr);
	else
		m_u8(m, 0);
}

static size_t rr_start(msg_t *m, const nm_t *owner, uint16_t type, uint16_t rclass, uint32_t ttl)
{
	m_name(m, owner, 1);
	m_u16(m, type);
	m_u16(m, rclass);
	m_u32(m, ttl);
	size_t at = m->n;
	m_u16(m, 0);
	return at;
}

static void rr_end(msg_t *m, size_t at)
{
	if (m->err)
		return;
	size_t len = m->n - at - 2;
	m->p[at] = (uint8_t)(len >> 8);
	m->p[at + 1] = (uint8_t)len;
}

static void rr_a(msg_t *m, const nm_t *o, uint32_t ttl, const uint8_t ip[4])
{
	size_t at = rr_start(m, o, T_A, 1, ttl);
	m_bytes(m, ip, 4);
	rr_end(m, at);
}

static void rr_aaaa(msg_t *m, const nm_t *o, uint32_t ttl, const uint8_t ip[16])
{
	size_t at = rr_start(m, o, T_AAAA, 1, ttl);
	m_bytes(m, ip, 16);
	rr_end(m, at);
}

static void rr_name(msg_t *m, const nm_t *o, uint16_t type, uint32_t ttl, const nm_t *target)
{
	size_t at = rr_start(m, o, type, 1, ttl);
	m_name(m, target, 1);
	rr_end(m, at);
}

static void rr_mx(msg_t *m, const nm_t *o, uint32_t ttl, unsigned pref, const nm_t *target)
{
	size_t at = rr_start(m, o, T_MX, 1, ttl);
	m_u16(m, pref);
	m_name(m, target, 1);
	rr_end(m, at);
}

/* TXT: the text split into character-strings of at most 255 bytes. */
static void rr_txt(msg_t *m, const nm_t *o, uint32_t ttl, const char *text)
{
	size_t at = rr_start(m, o, T_TXT, 1, ttl), len = strlen(text);
	do {
		size_t k = len < 255 ? len : 255;
		m_u8(m, (unsigned)k);
		m_bytes(m, text, k);
		text += k;
		len -= k;
	} while (len > 0);
	rr_end(m, at);
}

static void rr_opt(msg_t *m, int do_bit)
{
	m_u8(m, 0);
	m_u16(m, T_OPT);
	m_u16(m, 1232);
	m_u32(m, do_bit ? 0x8000u : 0);
	m_u16(m, 0);
	m->ar++;
}

static void rand_bytes(uint64_t *st, uint8_t *p, size_t n)
{
	for (size_t j = 0; j < n; j += 8) {
		uint64_t x = mix_rand(st);
		memcpy(p + j, &x, n - j < 8 ? n - j : 8);
	}
}

static void v4(uint64_t *st, uint8_t ip[4])
{
	const uint8_t *p = v4pre[below(st, 32)];
	ip[0] = p[0], ip[1] = p[1];
	ip[2] = (uint8_t)below(st, 256), ip[3] = (uint8_t)below(st, 256);
}

static void v6(uint64_t *st, uint8_t ip[16], const uint8_t *prefix6)
{
	memcpy(ip, prefix6 ? prefix6 : v6pre[below(st, 12)], 6);
	if (below(st, 10) < 4) { /* ::1 .. ::ff under a random /64 */
		rand_bytes(st, ip + 6, 2);
		memset(ip + 8, 0, 7);
		ip[15] = (uint8_t)(1 + below(st, 255));
	} else {
		rand_bytes(st, ip + 6, 10);
	}
}

/* 1 (55%), 2 (25%), 3-4 (12%), 5-8 (8%) */
static unsigned addr_count(uint64_t *st)
{
	unsigned r = below(st, 100);
	return r < 55 ? 1 : r < 80 ? 2 : r < 92 ? 3 + below(st, 2) : 5 + below(st, 4);
}

/* --------------------------------------------------------------- DNSSEC */

static void rr_rrsig(msg_t *m, ent_t *e, const nm_t *owner, uint16_t covered, uint32_t ttl,
		     unsigned alg, uint16_t tag, const nm_t *signer)
{
	/* the zone signs in batches: inception up to a week before REALMIX_NOW,
	 * validity 14, 21 or 30 days */
	uint64_t zs = e->g.sig_seed ^ covered;
	uint32_t inception = REALMIX_NOW - 3600 - below(&zs, 7 * 86400);
	static const uint32_t days[3] = { 14, 21, 30 };
	uint32_t expiration = inception + days[below(&zs, 3)] * 86400;
	size_t at = rr_start(m, owner, T_RRSIG, 1, ttl);
	m_u16(m, covered);
	m_u8(m, alg);
	m_u8(m, nm_labels(owner));
	m_u32(m, ttl);
	m_u32(m, expiration);
	m_u32(m, inception);
	m_u16(m, tag);
	m_name(m, signer, 0); /* never compressed (RFC 4034 3.1.7) */
	uint8_t sig[256];
	size_t sl = alg == 13 ? 64 : 256;
	rand_bytes(&e->st, sig, sl);
	m_bytes(m, sig, sl);
	rr_end(m, at);
}

static void rr_dnskey(msg_t *m, ent_t *e, const nm_t *o, uint32_t ttl, unsigned flags,
		      unsigned alg)
{
	size_t at = rr_start(m, o, T_DNSKEY, 1, ttl);
	m_u16(m, flags);
	m_u8(m, 3);
	m_u8(m, alg);
	uint8_t key[256];
	if (alg == 13) {
		rand_bytes(&e->st, key, 64);
		m_bytes(m, key, 64);
	} else { /* RFC 3110: exponent length 3, 65537, a 2048-bit modulus */
		static const uint8_t exp[4] = { 3, 1, 0, 1 };
		m_bytes(m, exp, 4);
		rand_bytes(&e->st, key, 256);
		key[0] |= 0x80;
		m_bytes(m, key, 256);
	}
	rr_end(m, at);
}

/* ---------------------------------------------------------------- NS, SOA */

/* The zone's name servers (2 or 4). */
static unsigned ns_set(const grp_t *z, nm_t ns[4])
{
	char t[96];
	static const char *const r53tld[4] = { "com", "net", "org", "co.uk" };
	unsigned n = 0;
	memset(ns, 0, 4 * sizeof ns[0]);
	switch (z->ns_kind) {
	case NS_ROUTE53:
		for (n = 0; n < 4; n++) {
			snprintf(t, sizeof t, "ns-%u.awsdns-%02u.%s", z->ns_num[n] % 2048,
				 z->ns_num[n] / 2048 % 64, r53tld[n]);
			nm_full(&ns[n], t);
		}
		break;
	case NS_CLOUDFLARE:
		for (n = 0; n < 2; n++) {
			snprintf(t, sizeof t, "%s.ns.cloudflare.com",
				 cf_names[(z->ns_num[0] + 7 * n) % 32]);
			nm_full(&ns[n], t);
		}
		break;
	case NS_GODADDY:
		for (n = 0; n < 2; n++) {
			snprintf(t, sizeof t, "ns%02u.domaincontrol.com",
				 2 * (z->ns_num[0] % 40) + 1 + n);
			nm_full(&ns[n], t);
		}
		break;
	case NS_NS1:
		for (n = 0; n < 4; n++) {
			snprintf(t, sizeof t, "dns%u.p%02u.nsone.net", n + 1, z->ns_num[0] % 100);
			nm_full(&ns[n], t);
		}
		break;
	default:
		for (n = 0; n < 2; n++) {
			snprintf(t, sizeof t, "ns%u", n + 1);
			nm_dotted(&ns[n], t);
			nm_cat(&ns[n], &z->dom);
		}
		break;
	}
	return n;
}

/* The zone's SOA in the authority section; @return its negative TTL */
static uint32_t soa(msg_t *m, const grp_t *z)
{
	nm_t ns[4], rname = { .n = 0 };
	ns_set(z, ns);
	uint32_t ttl, refresh, retry, expire, minimum;
	switch (z->ns_kind) {
	case NS_ROUTE53:
		nm_full(&rname, "awsdns-hostmaster.amazon.com");
		ttl = 900, refresh = 7200, retry = 900, expire = 1209600, minimum = 86400;
		break;
	case NS_CLOUDFLARE:
		nm_full(&rname, "dns.cloudflare.com");
		ttl = 1800, refresh = 10000, retry = 2400, expire = 604800, minimum = 1800;
		break;
	case NS_GODADDY:
		nm_full(&rname, "dns.jomax.net");
		ttl = 600, refresh = 28800, retry = 7200, expire = 604800, minimum = 600;
		break;
	case NS_NS1:
		nm_full(&rname, "hostmaster.nsone.net");
		ttl = 3600, refresh = 43200, retry = 7200, expire = 1209600, minimum = 3600;
		break;
	default:
		nm_dotted(&rname, "hostmaster");
		nm_cat(&rname, &z->dom);
		ttl = 3600, refresh = 3600, retry = 900, expire = 604800, minimum = 300;
		break;
	}
	size_t at = rr_start(m, &z->dom, T_SOA, 1, ttl);
	m_name(m, &ns[0], 1);
	m_name(m, &rname, 1);
	m_u32(m, z->serial);
	m_u32(m, refresh);
	m_u32(m, retry);
	m_u32(m, expire);
	m_u32(m, minimum);
	rr_end(m, at);
	m->ns++;
	return ttl < minimum ? ttl : minimum;
}

/* ---------------------------------------------------------------- answers */

/* n addresses: one provider prefix for the whole RRset (given, or drawn) */
static void addresses(msg_t *m, ent_t *e, const nm_t *owner, uint16_t qtype, unsigned n,
		      uint32_t ttl, const uint8_t *pre4, const uint8_t *pre6)
{
	if (pre4 == NULL)
		pre4 = v4pre[below(&e->st, 32)];
	if (pre6 == NULL)
		pre6 = v6pre[below(&e->st, 12)];
	for (unsigned r = 0; r < n; r++) {
		if (qtype == T_A) {
			uint8_t ip[4];
			v4(&e->st, ip);
			if (pre4)
				ip[0] = pre4[0], ip[1] = pre4[1];
			rr_a(m, owner, ttl, ip);
		} else {
			uint8_t ip[16];
			v6(&e->st, ip, pre6);
			rr_aaaa(m, owner, ttl, ip);
		}
		m->an++;
	}
}

static void provider_answer(msg_t *m, ent_t *e)
{
	uint64_t *st = &e->st;
	static const uint8_t cf4[4][2] = { {13, 224}, {13, 225}, {18, 64}, {52, 84} };
	static const uint8_t cf6[6] = { 0x26, 0x00, 0x90, 0x00, 0x21, 0x00 };
	static const uint8_t ak4[4][2] = { {23, 32}, {23, 45}, {104, 96}, {184, 25} };
	static const uint8_t ak6[6] = { 0x26, 0x00, 0x14, 0x06, 0x3c, 0x00 };
	static const uint8_t fa4[2] = { 151, 101 };
	static const uint8_t fa6[6] = { 0x2a, 0x04, 0x4e, 0x42, 0x00, 0x00 };
	switch (e->g.prov) {
	case PROV_CLOUDFRONT:
		addresses(m, e, &e->q, e->qtype, below(st, 3) ? 4 : 8, 60, cf4[below(st, 4)], cf6);
		break;
	case PROV_AKAMAI:
		addresses(m, e, &e->q, e->qtype, 1 + below(st, 2), 20, ak4[below(st, 4)], ak6);
		break;
	case PROV_FASTLY:
		addresses(m, e, &e->q, e->qtype, 4, 30, fa4, fa6);
		break;
	default: /* AWS, Google: the address is in the name */
		if (e->qtype == T_A) {
			uint8_t ip[4];
			provider_ip(e, ip);
			rr_a(m, &e->q, 300, ip);
			m->an++;
		} else {
			addresses(m, e, &e->q, e->qtype, 1, 300, NULL, NULL);
		}
		break;
	}
}

/* CNAME chains: the target names, hop by hop, then the addresses. */
static void cname_answer(msg_t *m, ent_t *e)
{
	uint64_t *st = &e->st;
	const grp_t *z = &e->g;
	nm_t hop[5];
	unsigned nh = 0;
	char t[160];
	uint32_t cttl = ttl_other[below(st, 8)], attl;
	const uint8_t *pre4 = NULL, *pre6 = NULL;
	unsigned naddr;
	/* the owner's first label ("www", "web", "api"...) */
	char host[64];
	memcpy(host, e->q.b + 1, e->q.b[0]);
	host[e->q.b[0]] = 0;
	memset(hop, 0, sizeof hop);
	static const uint8_t cfl4[3][2] = { {104, 16}, {104, 17}, {172, 67} };
	static const uint8_t cfl6[6] = { 0x26, 0x06, 0x47, 0x00, 0x00, 0x00 };
	static const uint8_t cfr4[2] = { 13, 224 };
	static const uint8_t fa4[2] = { 151, 101 };
	static const uint8_t gh4[2] = { 185, 199 };
	static const uint8_t go4[2] = { 142, 250 };
	static const uint8_t ms4[2] = { 13, 107 };
	static const uint8_t ak4[2] = { 23, 45 };
	switch (e->sub % 8) {
	case 0: /* Akamai */
		snprintf(t, sizeof t, "%s.%s.edgekey.net", host, z->text);
		nm_full(&hop[nh++], t);
		snprintf(t, sizeof t, "e%u.%s.akamaiedge.net", 1000 + below(st, 99000),
			 below(st, 2) ? "a" : "dscx");
		nm_full(&hop[nh++], t);
		attl = 20, naddr = 1 + below(st, 2), pre4 = ak4;
		break;
	case 1: /* Cloudflare (CNAME setup) */
		snprintf(t, sizeof t, "%s.%s.cdn.cloudflare.net", host, z->text);
		nm_full(&hop[nh++], t);
		attl = 300, naddr = 2, pre4 = cfl4[below(st, 3)], pre6 = cfl6;
		break;
	case 2: { /* CloudFront */
		sb_t s = { .n = 0 };
		sb_cat(&s, "d");
		sb_rand(&s, st, ALNUM_LC, 13);
		sb_cat(&s, ".cloudfront.net");
		nm_full(&hop[nh++], s.b);
		attl = 60, naddr = below(st, 3) ? 4 : 8, pre4 = cfr4;
		break;
	}
	case 3: /* Fastly */
		snprintf(t, sizeof t, "%s.map.fastly.net", z->label);
		nm_full(&hop[nh++], t);
		snprintf(t, sizeof t, "dualstack.%s.map.fastly.net", z->label);
		if (below(st, 2))
			nm_full(&hop[nh++], t);
		attl = 30, naddr = 4, pre4 = fa4;
		break;
	case 4: /* Azure Front Door */
		snprintf(t, sizeof t, "%s-%s.azureedge.net", z->label, host);
		nm_full(&hop[nh++], t);
		snprintf(t, sizeof t, "%s-%s.afd.azureedge.net", z->label, host);
		nm_full(&hop[nh++], t);
		nm_full(&hop[nh++], "star-azureedge-prod.trafficmanager.net");
		snprintf(t, sizeof t, "dual.part-%04u.t-%04u.t-msedge.net", below(st, 60),
			 below(st, 9999));
		nm_full(&hop[nh++], t);
		attl = 60, naddr = 2, pre4 = ms4;
		break;
	case 5: /* GitHub Pages */
		snprintf(t, sizeof t, "%s.github.io", z->label);
		nm_full(&hop[nh++], t);
		attl = 3600, naddr = 4, pre4 = gh4;
		break;
	case 6: /* Google hosting */
		nm_full(&hop[nh++], "ghs.googlehosted.com");
		attl = 300, naddr = 1, pre4 = go4;
		break;
	default: /* an AWS load balancer */
		snprintf(t, sizeof t, "%s-%u.us-east-1.elb.amazonaws.com", z->label,
			 100000000u + below(st, 900000000u));
		nm_full(&hop[nh++], t);
		attl = 60, naddr = 2 + below(st, 2);
		break;
	}
	const nm_t *owner = &e->q;
	for (unsigned h = 0; h < nh; h++) {
		rr_name(m, owner, T_CNAME, h == 0 ? cttl : 300, &hop[h]);
		m->an++;
		owner = &hop[h];
	}
	addresses(m, e, owner, e->qtype, naddr, attl, pre4, pre6);
}

/* TXT strings */
static void spf(const ent_t *e, uint64_t *st, sb_t *s)
{
	static const char *const extra[10] = {
		"include:mailgun.org", "include:sendgrid.net", "include:amazonses.com",
		"include:servers.mcsv.net", "include:_spf.salesforce.com",
		"include:mail.zendesk.com", "include:spf.mandrillapp.com",
		"include:_spf.hubspotemail.net", "include:spf.brevo.com", "include:zoho.eu",
	};
	sb_cat(s, "v=spf1 ");
	switch (e->g.mx_kind) {
	case MX_GOOGLE: sb_cat(s, "include:_spf.google.com "); break;
	case MX_MICROSOFT: sb_cat(s, "include:spf.protection.outlook.com "); break;
	case MX_MIMECAST: sb_cat(s, "include:eu._netblocks.mimecast.com "); break;
	case MX_PROOFPOINT: sb_cat(s, "include:spf-00"); sb_fmt(s, "%llu", e->g.proof_id);
		sb_cat(s, ".pphosted.com "); break;
	case MX_ZOHO: sb_cat(s, "include:zoho.com "); break;
	default: sb_cat(s, "mx a "); break;
	}
	if (below(st, 4) == 0) {
		uint8_t ip[4];
		v4(st, ip);
		char t[40];
		snprintf(t, sizeof t, "ip4:%u.%u.%u.0/24 ", ip[0], ip[1], ip[2]);
		sb_cat(s, t);
	}
	for (unsigned k = below(st, 4); k > 0; k--) {
		sb_cat(s, extra[below(st, 10)]);
		sb_cat(s, " ");
	}
	unsigned a = below(st, 100);
	sb_cat(s, a < 60 ? "~all" : a < 95 ? "-all" : "?all");
}

static void uuid(uint64_t *st, sb_t *s)
{
	sb_rand(s, st, HEX, 8), sb_cat(s, "-"), sb_rand(s, st, HEX, 4), sb_cat(s, "-4");
	sb_rand(s, st, HEX, 3), sb_cat(s, "-a"), sb_rand(s, st, HEX, 3), sb_cat(s, "-");
	sb_rand(s, st, HEX, 12);
}

static void apex_txt(msg_t *m, ent_t *e, uint32_t ttl)
{
	uint64_t *st = &e->st;
	sb_t s;
	/* the strings of an apex TXT set, each included with its own odds */
	if (below(st, 100) < 85) {
		s.n = 0, s.b[0] = 0;
		spf(e, st, &s);
		rr_txt(m, &e->q, ttl, s.b);
		m->an++;
	}
	for (unsigned v = 0; v < 8; v++) {
		static const unsigned odds[8] = { 50, 30, 20, 10, 10, 10, 5, 5 };
		if (below(st, 100) >= odds[v])
			continue;
		s.n = 0, s.b[0] = 0;
		switch (v) {
		case 0: sb_cat(&s, "google-site-verification="); sb_rand(&s, st, B64URL, 43); break;
		case 1: sb_cat(&s, "MS=ms"); sb_rand(&s, st, DIGITS, 8); break;
		case 2: sb_cat(&s, "facebook-domain-verification="); sb_rand(&s, st, ALNUM_LC, 30);
			break;
		case 3: sb_cat(&s, "apple-domain-verification="); sb_rand(&s, st, ALNUM, 16); break;
		case 4: sb_cat(&s, "atlassian-domain-verification="); sb_rand(&s, st, B64, 64);
			break;
		case 5: sb_cat(&s, "docusign="); uuid(st, &s); break;
		case 6: sb_cat(&s, "stripe-verification="); sb_rand(&s, st, HEX, 64); break;
		default: sb_cat(&s, "_globalsign-domain-verification=");
			sb_rand(&s, st, B64URL, 42); break;
		}
		rr_txt(m, &e->q, ttl, s.b);
		m->an++;
	}
	if (m->an == 0) { /* nothing drawn: a lone verification token */
		s.n = 0, s.b[0] = 0;
		sb_cat(&s, "google-site-verification=");
		sb_rand(&s, st, B64URL, 43);
		rr_txt(m, &e->q, ttl, s.b);
		m->an++;
	}
}

static void txt_answer(msg_t *m, ent_t *e)
{
	uint64_t *st = &e->st;
	uint32_t ttl = ttl_other[below(st, 8)];
	sb_t s = { .n = 0 };
	if (e->slot == 0) {
		apex_txt(m, e, ttl);
		return;
	}
	if (e->slot == 1) { /* DMARC */
		static const char *const pol[3] = { "none", "quarantine", "reject" };
		sb_cat(&s, "v=DMARC1; p=");
		sb_cat(&s, pol[below(st, 3)]);
		switch (below(st, 4)) {
		case 0: sb_cat(&s, "; rua=mailto:dmarc@"); sb_cat(&s, e->g.text); break;
		case 1: sb_cat(&s, "; rua=mailto:dmarc-reports@"); sb_cat(&s, e->g.text); break;
		case 2: sb_cat(&s, "; rua=mailto:re+"); sb_rand(&s, st, ALNUM_LC, 11);
			sb_cat(&s, "@dmarc.postmarkapp.com"); break;
		default: sb_cat(&s, "; rua=mailto:"); sb_rand(&s, st, HEX, 10);
			sb_cat(&s, "@rua.agari.com"); break;
		}
		if (below(st, 3) == 0) {
			sb_cat(&s, "; ruf=mailto:dmarc@");
			sb_cat(&s, e->g.text);
			sb_cat(&s, "; fo=1");
		}
		if (below(st, 2))
			sb_cat(&s, "; pct=100");
		if (below(st, 3) == 0)
			sb_cat(&s, "; adkim=r; aspf=r");
	} else { /* DKIM: a DER SubjectPublicKeyInfo in base64, 1024 or 2048 bits */
		int big = below(st, 10) < 6;
		sb_cat(&s, "v=DKIM1; ");
		if (below(st, 4) == 0)
			sb_cat(&s, "h=sha256; ");
		sb_cat(&s, "k=rsa; p=");
		sb_cat(&s, big ? "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
			       : "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ");
		sb_rand(&s, st, B64, big ? 392 - 44 - 6 : 216 - 38 - 6);
		sb_cat(&s, "IDAQAB");
	}
	rr_txt(m, &e->q, ttl, s.b);
	m->an++;
}

static void mx_answer(msg_t *m, ent_t *e, uint32_t ttl)
{
	uint64_t *st = &e->st;
	const grp_t *z = &e->g;
	nm_t t;
	char b[128];
	switch (z->mx_kind) {
	case MX_GOOGLE:
		if (below(st, 4) == 0) {
			memset(&t, 0, sizeof t);
			nm_full(&t, "smtp.google.com");
			rr_mx(m, &e->q, ttl, 1, &t);
			m->an++;
			break;
		}
		for (unsigned k = 0; k < 5; k++) {
			static const char *const g[5] = { "aspmx.l.google.com",
				"alt1.aspmx.l.google.com", "alt2.aspmx.l.google.com",
				"alt3.aspmx.l.google.com", "alt4.aspmx.l.google.com" };
			static const unsigned pref[5] = { 1, 5, 5, 10, 10 };
			memset(&t, 0, sizeof t);
			nm_full(&t, g[k]);
			rr_mx(m, &e->q, ttl, pref[k], &t);
			m->an++;
		}
		break;
	case MX_MICROSOFT: {
		/* bluecloud-co-uk.mail.protection.outlook.com */
		size_t n = (size_t)snprintf(b, sizeof b, "%s", z->text);
		for (size_t j = 0; j < n; j++)
			if (b[j] == '.')
				b[j] = '-';
		strcat(b, ".mail.protection.outlook.com");
		memset(&t, 0, sizeof t);
		nm_full(&t, b);
		rr_mx(m, &e->q, ttl, 0, &t);
		m->an++;
		break;
	}
	case MX_MIMECAST:
	case MX_PROOFPOINT:
	case MX_ZOHO:
		for (unsigned k = 0; k < (z->mx_kind == MX_ZOHO ? 3u : 2u); k++) {
			if (z->mx_kind == MX_MIMECAST)
				snprintf(b, sizeof b, "%s-smtp-inbound-%u.mimecast.com",
					 z->sfx == 0 ? "us" : "eu", k + 1);
			else if (z->mx_kind == MX_PROOFPOINT)
				snprintf(b, sizeof b, "mx0%c-00%u.pphosted.com", 'a' + k,
					 (unsigned)z->proof_id);
			else
				snprintf(b, sizeof b, "mx%s.zoho.com",
					 k == 0 ? "" : k == 1 ? "2" : "3");
			memset(&t, 0, sizeof t);
			nm_full(&t, b);
			rr_mx(m, &e->q, ttl, z->mx_kind == MX_ZOHO ? 10u + 10 * k * k : 10,
			      &t);
			m->an++;
		}
		break;
	default:
		for (unsigned k = 0; k < 2; k++) {
			memset(&t, 0, sizeof t);
			nm_dotted(&t, k ? "mx2" : "mx1");
			nm_cat(&t, &z->dom);
			rr_mx(m, &e->q, ttl, 10 * (k + 1), &t);
			m->an++;
		}
		break;
	}
}

/* Glue for self-hosted name servers. */
static void glue(msg_t *m, ent_t *e, const nm_t *ns, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		uint8_t ip[16];
		v4(&e->st, ip);
		rr_a(m, &ns[k], 172800, ip);
		m->ar++;
		if (below(&e->st, 2)) {
			v6(&e->st, ip, NULL);
			rr_aaaa(m, &ns[k], 172800, ip);
			m->ar++;
		}
	}
}

static void signed_answer(msg_t *m, ent_t *e)
{
	uint64_t *st = &e->st;
	const grp_t *z = &e->g;
	uint32_t ttl;
	switch (e->qtype) {
	case T_A:
	case T_AAAA:
		ttl = ttl_addr[below(st, 12)];
		addresses(m, e, &e->q, e->qtype, addr_count(st), ttl, NULL, NULL);
		break;
	case T_TXT: {
		sb_t s = { .n = 0 };
		ttl = ttl_other[below(st, 8)];
		spf(e, st, &s);
		rr_txt(m, &e->q, ttl, s.b);
		m->an++;
		break;
	}
	default:
		ttl = ttl_other[below(st, 8)];
		mx_answer(m, e, ttl);
		break;
	}
	rr_rrsig(m, e, &e->q, e->qtype, ttl, z->alg, z->zsk, &z->dom);
	m->an++;
}

static void build(ent_t *e, msg_t *m)
{
	uint64_t *st = &e->st;
	const grp_t *z = &e->g;
	unsigned flags = 0x8180, rcode = 0;
	int dnssec = e->kind == REALMIX_SIGNED || e->kind == REALMIX_DNSKEY ||
		     e->kind == REALMIX_DS;
	if (dnssec)
		flags |= 0x0020; /* AD */
	m->n = 12;
	m_name(m, &e->q, 1);
	m_u16(m, e->qtype);
	m_u16(m, 1);
	if (z->prov >= 0 && (e->kind == REALMIX_A || e->kind == REALMIX_AAAA)) {
		provider_answer(m, e);
	} else {
		switch (e->kind) {
		case REALMIX_A:
		case REALMIX_AAAA:
			addresses(m, e, &e->q, e->qtype, addr_count(st), ttl_addr[below(st, 12)],
				  NULL, NULL);
			break;
		case REALMIX_CNAME:
			cname_answer(m, e);
			break;
		case REALMIX_TXT:
			txt_answer(m, e);
			break;
		case REALMIX_MX:
			mx_answer(m, e, ttl_other[below(st, 8)]);
			break;
		case REALMIX_NS:
		case REALMIX_REFERRAL: {
			nm_t ns[4];
			unsigned n = ns_set(z, ns);
			uint32_t ttl = e->kind == REALMIX_NS ? ttl_other[below(st, 8)] : 172800;
			for (unsigned k = 0; k < n; k++) {
				rr_name(m, &z->dom, T_NS, ttl, &ns[k]);
				if (e->kind == REALMIX_NS)
					m->an++;
				else
					m->ns++;
			}
			if (z->ns_kind == NS_SELF)
				glue(m, e, ns, n);
			if (e->kind == REALMIX_REFERRAL)
				flags = 0x8100; /* from the parent: no RA, no answer */
			break;
		}
		case REALMIX_NXDOMAIN:
			rcode = 3;
			soa(m, z);
			break;
		case REALMIX_NODATA:
			soa(m, z);
			break;
		case REALMIX_SIGNED:
			signed_answer(m, e);
			break;
		case REALMIX_DNSKEY: {
			uint32_t ttl = below(st, 2) ? 3600 : 86400;
			unsigned nk = below(st, 10) < 3 ? 3 : 2;
			rr_dnskey(m, e, &e->q, ttl, 256, z->alg);
			rr_dnskey(m, e, &e->q, ttl, 257, z->alg);
			if (nk == 3)
				rr_dnskey(m, e, &e->q, ttl, 257, z->alg);
			m->an += nk;
			rr_rrsig(m, e, &e->q, T_DNSKEY, ttl, z->alg, z->ksk, &z->dom);
			m->an++;
			if (nk == 3) {
				rr_rrsig(m, e, &e->q, T_DNSKEY, ttl, z->alg, z->ksk2, &z->dom);
				m->an++;
			}
			break;
		}
		default: { /* DS, signed by the TLD */
			nm_t tld = { .n = 0 };
			nm_full(&tld, suffixes[z->sfx].text);
			unsigned nd = below(st, 4) == 0 ? 2 : 1;
			for (unsigned k = 0; k < nd; k++) {
				size_t at = rr_start(m, &e->q, T_DS, 1, 86400);
				uint8_t dg[32];
				m_u16(m, k ? z->ksk2 : z->ksk);
				m_u8(m, z->alg);
				m_u8(m, 2);
				rand_bytes(st, dg, 32);
				m_bytes(m, dg, 32);
				rr_end(m, at);
				m->an++;
			}
			uint16_t tag = (uint16_t)mix_splitmix64(rm_seed ^ z->sfx);
			rr_rrsig(m, e, &e->q, T_DS, 86400, suffixes[z->sfx].alg, tag, &tld);
			m->an++;
			break;
		}
		}
	}
	rr_opt(m, dnssec);
	if (m->err)
		return;
	uint8_t *h = m->p;
	h[0] = (uint8_t)(e->id >> 8), h[1] = (uint8_t)e->id;
	h[2] = (uint8_t)(flags >> 8), h[3] = (uint8_t)(flags | rcode);
	h[4] = 0, h[5] = 1;
	h[6] = (uint8_t)(m->an >> 8), h[7] = (uint8_t)m->an;
	h[8] = (uint8_t)(m->ns >> 8), h[9] = (uint8_t)m->ns;
	h[10] = (uint8_t)(m->ar >> 8), h[11] = (uint8_t)m->ar;
}

size_t realmix_response(size_t i, uint8_t *buf, size_t cap)
{
	ent_t e;
	static _Thread_local msg_t m; /* large (the compression table's copies) */
	gen(i, &e);
	if (cap < 12) /* the header is written last */
		return 0;
	memset(&m, 0, offsetof(msg_t, names));
	m.p = buf;
	m.cap = cap;
	build(&e, &m);
	return m.err || e.q.err ? 0 : m.n;
}

size_t realmix_query(size_t i, uint16_t id, uint8_t *buf, size_t cap)
{
	ent_t e;
	gen(i, &e);
	int dnssec = e.kind == REALMIX_SIGNED || e.kind == REALMIX_DNSKEY || e.kind == REALMIX_DS;
	msg_t m;
	memset(&m, 0, offsetof(msg_t, names));
	m.p = buf;
	m.cap = cap;
	m_u16(&m, id);
	m_u16(&m, 0x0100);
	m_u16(&m, 1);
	m_u16(&m, 0);
	m_u16(&m, 0);
	m_u16(&m, 1);
	m_name(&m, &e.q, 0);
	m_u16(&m, e.qtype);
	m_u16(&m, 1);
	rr_opt(&m, dnssec);
	return m.err || e.q.err ? 0 : m.n;
}
