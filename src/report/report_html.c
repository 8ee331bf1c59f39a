/* SPDX-License-Identifier: MIT */
/* report_html.c: the HTML report (`anelint report -o report.html`): one
 * self-contained page per run, no network and no external assets. Per model:
 * the summary, the partition bar (one coloured block per segment, by layers and
 * by FLOPs), the segments, the cheapest fixes, the dataflow graph as inline SVG
 * coloured by the unit the plan puts each layer on, and the per-layer table
 * (shapes, cost, rule ids, reasons, the suggested fix). Then the rules that
 * fired, in full. docs/reports.md describes the structure.
 *
 * Everything essential is plain HTML and CSS: "only fallbacks" is a checkbox
 * that CSS acts on; the one inline script adds the search (layer names, types and rule ids). The
 * page's Content-Security-Policy allows no fetch at all and only that script,
 * by its SHA-256, so markup that a hostile name might smuggle past the escaping
 * could still not run. Every text from the model goes through ali_put_esc.
 *
 * The graph stays readable for models of thousands of layers: const ops are
 * left out and nested graphs folded into their owner (report_graph.c), and it
 * is cut into pages of GRAPH_PAGE layers in model order, each its own SVG in a
 * <details> (the first open), laid out in layers (see layout()). */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define GRAPH_PAGE 200 /* layers per SVG page */
#define NODE_W 168
#define NODE_H 36
#define GAP_X 26
#define GAP_Y 22
#define MAX_COLS 10 /* layers per drawn line; a wider row wraps */
#define MARGIN 14
#define LABEL_CHARS 26
#define TABLE_CHUNK 200 /* table rows per block laid out on demand */

/* ================================================================ SHA-256 (FIPS 180-4), for the CSP hash */

struct sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	uint64_t len;
	size_t fill;
};

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return x >> n | x << (32 - n);
}

static void sha_block(struct sha256 *c, const uint8_t *b)
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 | (uint32_t)b[4 * i + 2] << 8 |
		       b[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t v[8];
	memcpy(v, c->h, sizeof v);
	for (int i = 0; i < 64; i++) {
		uint32_t s1 = ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25);
		uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
		uint32_t t1 = v[7] + s1 + ch + sha_k[i] + w[i];
		uint32_t s0 = ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22);
		uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
		memmove(v + 1, v, 7 * sizeof v[0]);
		v[4] += t1;
		v[0] = t1 + s0 + maj;
	}
	for (int i = 0; i < 8; i++)
		c->h[i] += v[i];
}

static void sha_init(struct sha256 *c)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memset(c, 0, sizeof *c);
	memcpy(c->h, h0, sizeof h0);
}

static void sha_add(struct sha256 *c, const void *data, size_t n)
{
	const uint8_t *p = data;
	c->len += n;
	while (n--) {
		c->buf[c->fill++] = *p++;
		if (c->fill == 64) {
			sha_block(c, c->buf);
			c->fill = 0;
		}
	}
}

static void sha_end(struct sha256 *c, uint8_t out[32])
{
	uint64_t bits = c->len * 8;
	uint8_t pad = 0x80;
	sha_add(c, &pad, 1);
	pad = 0;
	while (c->fill != 56)
		sha_add(c, &pad, 1);
	uint8_t len[8];
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha_add(c, len, 8);
	for (int i = 0; i < 32; i++)
		out[i] = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* 'sha256-BASE64' of s, for the CSP script-src */
static void csp_hash(const char *s, char out[64])
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct sha256 c;
	uint8_t d[33] = {0};
	sha_init(&c);
	sha_add(&c, s, strlen(s));
	sha_end(&c, d);
	size_t o = 0;
	for (int i = 0; i < 33; i += 3) { /* 32 bytes: 10 full groups and one of 2 */
		uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < 32 ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < 32 ? b64[v & 63] : '=';
	}
	out[o] = 0;
}

/* ================================================================ the page's assets */

static const char css[] =
	":root{--ane:#2e7d32;--ane-bg:#c8e6c9;--gpu:#b45309;--gpu-bg:#fde3b5;--cpu:#c62828;"
	"--cpu-bg:#ffcdd2;--none:#616161;--none-bg:#e0e0e0;--line:#e2e2e2}\n"
	"*{box-sizing:border-box}\n"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
	"margin:0;color:#1b1b1b;background:#f6f6f6}\n"
	"header.top{position:sticky;top:0;z-index:3;background:#fff;border-bottom:1px solid #ccc;"
	"padding:8px 20px;display:flex;flex-wrap:wrap;gap:6px 18px;align-items:center}\n"
	"header.top h1{font-size:17px;margin:0}\n"
	".sub{color:#555;font-size:12px;margin:0;flex:1 1 320px}\n"
	".tools{display:flex;gap:10px;align-items:center}\n"
	".sr{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}\n"
	".toggle{border:1px solid #888;border-radius:4px;padding:2px 10px;cursor:pointer;"
	"user-select:none;background:#fff;white-space:nowrap}\n"
	".toggle::before{content:'\\2610\\00a0'}\n"
	"#only-fb:checked~header .toggle{background:#333;color:#fff}\n"
	"#only-fb:checked~header .toggle::before{content:'\\2611\\00a0'}\n"
	"#only-fb:focus-visible~header .toggle{outline:2px solid #1565c0}\n"
	"#only-fb:checked~main tr.ok{display:none}\n"
	"#q{font:inherit;padding:2px 6px;width:16em}\n"
	"#shown{color:#555;font-size:12px}\n"
	"main{padding:0 20px 40px;max-width:1600px}\n"
	"section.model,section.rules,section.errors{background:#fff;border:1px solid #d6d6d6;"
	"border-radius:6px;margin:16px 0;padding:2px 16px 16px}\n"
	"h2{font-size:16px;margin:12px 0 6px;word-break:break-all}\n"
	"h2 small{font-weight:normal;color:#555}\n"
	"h3{font-size:14px;margin:18px 0 6px}\n"
	".facts{display:grid;grid-template-columns:max-content 1fr;gap:1px 16px;margin:0}\n"
	".facts dt{color:#555}.facts dd{margin:0}\n"
	".bar{display:flex;height:26px;border:1px solid #777;border-radius:3px;overflow:hidden;"
	"margin:4px 0;background:#eee}\n"
	".bar.flops{height:12px}\n"
	".seg{display:block;min-width:2px;flex-basis:0}\n"
	".bar.flops .seg{min-width:0}\n"
	".seg+.seg{box-shadow:inset 1px 0 #fff}\n"
	".seg.u-ane{background:var(--ane)}.seg.u-gpu{background:#f59e0b}.seg.u-cpu{background:var(--cpu)}"
	".seg.u-none{background:var(--none)}\n"
	".legend{font-size:12px;color:#444}\n"
	".legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;vertical-align:-1px}\n"
	".legend i.u-ane{background:var(--ane)}.legend i.u-gpu{background:#f59e0b}"
	".legend i.u-cpu{background:var(--cpu)}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px}\n"
	"th,td{border-bottom:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}\n"
	"th{background:#f0f0f0;font-weight:600}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"td.name{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}\n"
	"td.name .in{display:block;color:#777;font-size:11px}\n"
	"tr.fb>td:first-child{box-shadow:inset 4px 0 var(--cpu)}\n"
	"tr.mv>td:first-child{box-shadow:inset 4px 0 #f59e0b}\n"
	"tr:target{outline:2px solid #1565c0}\n"
	"[id]{scroll-margin-top:72px}\n"
	".unit{display:inline-block;padding:0 6px;border-radius:3px;font-weight:600;font-size:12px;"
	"white-space:nowrap}\n"
	".unit.u-ane{background:var(--ane-bg);color:var(--ane)}"
	".unit.u-gpu{background:var(--gpu-bg);color:var(--gpu)}"
	".unit.u-cpu{background:var(--cpu-bg);color:var(--cpu)}"
	".unit.u-none{background:var(--none-bg);color:var(--none)}\n"
	".why{color:#666;font-size:11px;display:block}\n"
	".rid{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:600}\n"
	".k-warn{color:#8a6d00}\n"
	"td.fix{font-size:12px;color:#333}\n"
	/* fixed layout: a row's height never depends on the rows after it, so a
	 * table of thousands of rows lays out once, while it is parsed */
	"table.layers{table-layout:fixed;min-width:1100px}\n"
	".rows{content-visibility:auto}\n"
	"col.c-i{width:3.6em}col.c-n{width:15%}col.c-t{width:9em}col.c-v{width:6.4em}"
	"col.c-u{width:7.8em}col.c-s{width:8.5em}col.c-f{width:6.2em}col.c-w{width:6em}col.c-r{width:22%}"
	"col.c-x{width:20%}\n"
	/* a long name, type, shape or reason wraps inside its cell: it never runs
	 * into the next column, and the suggested fix is never clipped */
	"table.layers td{overflow-wrap:anywhere;word-break:break-word}\n"
	".note{color:#555;font-size:12px}\n"
	".err{color:var(--cpu)}\n"
	"details>summary{cursor:pointer;margin:4px 0}\n"
	".svgwrap{overflow:auto;max-height:85vh;border:1px solid #eee;background:#fcfcfc}\n"
	"svg text{font:11px system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;fill:#1b1b1b}\n"
	"svg text.t2{fill:#555;font-size:10px}\n"
	"svg .n rect{stroke-width:1.2}\n"
	"svg .u-ane rect{fill:var(--ane-bg);stroke:var(--ane)}"
	"svg .u-gpu rect{fill:var(--gpu-bg);stroke:var(--gpu)}"
	"svg .u-cpu rect{fill:var(--cpu-bg);stroke:var(--cpu)}"
	"svg .u-none rect{fill:var(--none-bg);stroke:var(--none)}\n"
	"svg .fb rect{stroke-width:3}\n"
	"svg .mv rect{stroke-dasharray:5 3;stroke-width:2}\n"
	"svg .e{fill:none;stroke:#9a9a9a;stroke-width:1.2}\n"
	"svg .e.sw{stroke:var(--cpu);stroke-width:2;stroke-dasharray:6 3}\n"
	"svg .stub{stroke:#9a9a9a;stroke-width:1.2;stroke-dasharray:2 2}\n"
	"svg a:hover rect,svg a:focus rect{stroke:#1565c0;stroke-width:3}\n"
	".zoom{margin:4px 0}.zoom button{font:inherit;min-width:2.2em;margin-right:4px}\n"
	".svgwrap{cursor:grab}\n"
	"#panel{position:fixed;top:0;right:0;width:380px;max-width:90vw;height:100vh;overflow:auto;"
	"background:#fff;border-left:1px solid var(--line);box-shadow:-4px 0 12px rgba(0,0,0,.12);"
	"padding:12px 16px;box-sizing:border-box;z-index:10}\n"
	"#panel h4{margin:0 2em 8px 0;overflow-wrap:anywhere}#panel-close{position:absolute;top:8px;right:10px;"
	"font:inherit;font-size:18px;border:0;background:none;cursor:pointer}\n"
	"#panel dt{font-weight:600;margin-top:6px;font-size:12px;color:#555}"
	"#panel dd{margin:0;white-space:pre-line;overflow-wrap:anywhere}\n"
	".rule{border-top:1px solid var(--line);padding:6px 0}\n"
	".rule p{margin:3px 0}\n"
	"footer{color:#666;font-size:12px;padding:0 20px 30px}\n";

/* The only script: the search (names, types, rule ids) and the row count while
 * filtering; the graph's side panel (a click on a node shows its row's facts),
 * zoom (buttons, ctrl+wheel) and pan (drag).
 * Its hash goes into the page's CSP; change it here and the hash follows. */
static const char script[] =
	"(function(){\n"
	"var q=document.getElementById('q'),cb=document.getElementById('only-fb'),"
	"shown=document.getElementById('shown');\n"
	"if(!q||!cb||!shown)return;\n"
	"q.hidden=false;\n"
	"var rows=document.querySelectorAll('table.layers tbody tr'),names=[];\n"
	"for(var i=0;i<rows.length;i++){var r=rows[i],c=r.querySelector('td.name'),t=r.cells[2],"
	"ids=r.querySelectorAll('td.reasons a.rid'),k=c?c.firstChild.textContent:'';\n"
	"if(t)k+='\\n'+t.textContent;for(var j=0;j<ids.length;j++)k+='\\n'+ids[j].textContent;\n"
	"names.push(k.toLowerCase());}\n"
	"function apply(){var s=q.value.toLowerCase(),only=cb.checked,n=0;\n"
	"for(var i=0;i<rows.length;i++){var r=rows[i],show=(!only||!r.classList.contains('ok'))&&"
	"(!s||names[i].indexOf(s)>=0);\n"
	"r.style.display=show?'':'none';if(show)n++;}\n"
	"shown.textContent=(s||only)?n+' of '+rows.length+' rows shown':'';}\n"
	"q.addEventListener('input',apply);cb.addEventListener('change',apply);\n"
	"if(q.value||cb.checked)apply();\n"
	"})();\n"
	/* the graph: a click on a node opens the side panel with its row's facts;
	 * zoom buttons and ctrl+wheel scale the drawing, dragging pans it */
	"(function(){\n"
	"var panel=document.getElementById('panel'),pb=document.getElementById('panel-body'),"
	"pt=document.getElementById('panel-title'),pl=document.getElementById('panel-row');\n"
	"if(!panel||!pb||!pt||!pl)return;\n"
	"var labels=['#','name','type','own verdict','runs on','output shape','FLOPs','weights (B)',"
	"'rules and reasons','suggested fix'];\n"
	"function text(c){var s='';for(var i=0;i<c.childNodes.length;i++){var x=c.childNodes[i];"
	"s+=x.nodeName==='BR'?'\\n':x.nodeType===3?x.nodeValue:text(x);}return s;}\n"
	"function show(id){var r=document.getElementById(id);if(!r)return false;\n"
	"while(pb.firstChild)pb.removeChild(pb.firstChild);\n"
	"for(var k=0;k<r.cells.length&&k<labels.length;k++){var t=k===1?r.cells[k].firstChild.textContent:"
	"text(r.cells[k]);if(!t)continue;\n"
	"var dt=document.createElement('dt'),dd=document.createElement('dd');dt.textContent=labels[k];"
	"dd.textContent=t;dd.className='c'+k;pb.appendChild(dt);pb.appendChild(dd);}\n"
	"var pa=r.getAttribute('data-params');if(pa){var c=document.createElement('dt'),"
	"d=document.createElement('dd');c.textContent='parameters';d.textContent=pa;d.className='params';"
	"pb.appendChild(c);pb.appendChild(d);}\n"
	"var io=r.cells[1]?r.cells[1].getAttribute('title'):'';if(io){var a=document.createElement('dt'),"
	"b=document.createElement('dd');a.textContent='inputs / outputs';b.textContent=io;b.className='io';"
	"pb.appendChild(a);pb.appendChild(b);}\n"
	"pt.textContent=r.cells[1]?r.cells[1].firstChild.textContent:id;pl.setAttribute('href','#'+id);"
	"panel.setAttribute('data-row',id);panel.hidden=false;return true;}\n"
	"document.addEventListener('click',function(e){var t=e.target;\n"
	"if(t&&t.id==='panel-close'){panel.hidden=true;return;}\n"
	"var a=t&&t.closest?t.closest('svg a'):null;if(!a)return;\n"
	"if(show((a.getAttribute('href')||'').slice(1)))e.preventDefault();});\n"
	"function zoom(w,f){var g=w.querySelector('svg');if(!g)return;var vb=g.viewBox.baseVal,"
	"s=parseFloat(g.getAttribute('data-s')||'1');\n"
	"s=f?Math.min(8,Math.max(0.1,s*f)):Math.min(1,(w.clientWidth-4)/vb.width);g.setAttribute('data-s',s);\n"
	"g.setAttribute('width',Math.round(vb.width*s));g.setAttribute('height',Math.round(vb.height*s));}\n"
	"var ws=document.querySelectorAll('.svgwrap');\n"
	"for(var i=0;i<ws.length;i++)(function(w){var z=w.previousElementSibling;\n"
	"if(z&&z.className==='zoom'){z.hidden=false;z.addEventListener('click',function(e){"
	"var f=e.target.getAttribute('data-z');if(f!==null)zoom(w,parseFloat(f));});}\n"
	"w.addEventListener('wheel',function(e){if(!e.ctrlKey&&!e.metaKey)return;e.preventDefault();"
	"zoom(w,e.deltaY<0?1.25:0.8);},{passive:false});\n"
	"var drag=null;w.addEventListener('mousedown',function(e){if(e.button||(e.target.closest&&"
	"e.target.closest('svg a')))return;drag={x:e.clientX,y:e.clientY,l:w.scrollLeft,t:w.scrollTop};"
	"e.preventDefault();});\n"
	"window.addEventListener('mousemove',function(e){if(!drag)return;w.scrollLeft=drag.l-(e.clientX-drag.x);"
	"w.scrollTop=drag.t-(e.clientY-drag.y);});\n"
	"window.addEventListener('mouseup',function(){drag=null;});})(ws[i]);\n"
	"})();\n";

/* ================================================================ writing */

struct html {
	FILE *out;
	const struct al_report_opts *o;
	uint32_t sections;
	const struct al_report_item *last_item;
	const struct al_rule **fired; /* every rule that fired, for the rules section */
	size_t n_fired, cap_fired;
};

static void esc(FILE *out, const char *s)
{
	ali_put_esc(out, s, AL_ESC_HTML, 0);
}

static const char *unit_class(enum al_unit u)
{
	switch (u) {
	case AL_UNIT_ANE: return "u-ane";
	case AL_UNIT_GPU: return "u-gpu";
	case AL_UNIT_CPU:
	case AL_UNIT_GPU_OR_CPU: return "u-cpu";
	default: return "u-none";
	}
}

static void put_unit(FILE *out, enum al_unit u)
{
	fprintf(out, "<span class=\"unit %s\">%s</span>", unit_class(u), ali_unit_upper(u));
}

static void note_rule(struct html *h, const struct al_rule *r)
{
	for (size_t i = 0; i < h->n_fired; i++)
		if (h->fired[i] == r)
			return;
	if (h->n_fired == h->cap_fired) {
		size_t nc = h->cap_fired ? 2 * h->cap_fired : 32;
		const struct al_rule **v = ali_realloc(h->fired, nc * sizeof *v);
		if (!v)
			return; /* the rules section then lists fewer: the table still names them */
		h->fired = v;
		h->cap_fired = nc;
	}
	h->fired[h->n_fired++] = r;
}

static void rule_link(FILE *out, const struct al_rule *r)
{
	fprintf(out, "<a class=\"rid%s\" href=\"#rule-", r->kind == AL_RULE_WARN ? " k-warn" : "");
	esc(out, r->id);
	fputs("\">", out);
	esc(out, r->id);
	fputs("</a>", out);
}

static void ms(FILE *out, double us)
{
	fprintf(out, "%.3f ms", isfinite(us) ? us / 1000.0 : 0.0);
}

/* ---------------------------------------------------------------- summary */

static void facts(struct html *h, const struct al_submodel *s, const struct al_plan *p,
		  const struct al_summary *sum)
{
	FILE *out = h->out;
	const char *what = s->world == AL_WORLD_MIL ? "ops" : "layers";
	uint32_t ane = sum->per_unit[AL_UNIT_ANE];
	char b1[32], b2[32];
	fputs("<dl class=\"facts\">\n", out);
	if (p) {
		fputs("<dt>target</dt><dd>", out);
		esc(out, p->target && p->target->id ? p->target->id : "?");
		fputs(", ", out);
		esc(out, p->target && p->target->name ? p->target->name : "");
		fputs("</dd>\n<dt>OS release</dt><dd>", out);
		esc(out, p->os ? p->os->id : "?");
		fputs(", ", out);
		esc(out, p->os ? p->os->name : "");
		fputs(" <span class=\"note\">(compute units ", out);
		esc(out, al_compute_units_name(p->compute_units));
		fputs(")</span></dd>\n<dt>policy</dt><dd>", out);
		esc(out, al_policy_name(p->policy));
		fputs(" <span class=\"note\">(", out);
		esc(out, p->policy_why ? p->policy_why : "");
		fputs(")</span></dd>\n", out);
	}
	fprintf(out, "<dt>%s</dt><dd>%" PRIu32, what, sum->nodes);
	if (sum->consts)
		fprintf(out, " <span class=\"note\">(+%" PRIu32 " const ops, not shown)</span>", sum->consts);
	/* the figures of check's summary line (ali_summarize): eligible by their own
	 * verdict, placed on the ANE after model-level rules and the partition */
	fprintf(out, "</dd>\n<dt>ANE-eligible</dt><dd data-eligible=\"%" PRIu32 "\">%" PRIu32 " (%.1f%%) by their "
		     "own verdict</dd>\n", sum->eligible, sum->eligible,
		sum->nodes ? 100.0 * sum->eligible / sum->nodes : 0.0);
	fprintf(out, "<dt>on the ANE</dt><dd data-ane=\"%" PRIu32 "\">%" PRIu32 " (%.1f%%) placed there", ane, ane,
		sum->nodes ? 100.0 * ane / sum->nodes : 0.0);
	if (sum->moved) {
		fputs("; ", out);
		ali_put_moves(out, sum); /* rule ids: no escaping needed */
	}
	fputs("</dd>\n", out);
	if (sum->unknown)
		fprintf(out, "<dt>unit unknown</dt><dd>%" PRIu32 " <span class=\"note\">(ANE057: the compiled "
			     "form does not say what the layer is)</span></dd>\n", sum->unknown);
	if (sum->nodes > ane + sum->unknown) {
		fprintf(out, "<dt>fall back</dt><dd>%" PRIu32 " (", sum->nodes - ane - sum->unknown);
		bool first = true;
		for (int u = AL_UNIT_GPU; u < AL_UNIT_COUNT; u++)
			if (sum->per_unit[u]) {
				fprintf(out, "%s%s %" PRIu32, first ? "" : ", ", al_unit_name(u), sum->per_unit[u]);
				first = false;
			}
		fputs(")</dd>\n", out);
	}
	if (p && p->n_nodes) {
		fprintf(out, "<dt>segments</dt><dd>%" PRIu32 ", %" PRIu32 " switch%s</dd>\n", p->n_segments,
			p->switches, p->switches == 1 ? "" : "es");
		if (p->total_flops > 0)
			fprintf(out, "<dt>FLOPs on the ANE</dt><dd>%.1f%% (%s of %s)</dd>\n",
				100.0 * p->ane_flops / p->total_flops, ali_si(b1, sizeof b1, p->ane_flops),
				ali_si(b2, sizeof b2, p->total_flops));
		else
			fputs("<dt>FLOPs on the ANE</dt><dd>no FLOPs known</dd>\n", out);
		fputs("<dt>estimate</dt><dd>", out);
		if (p->timed) {
			ms(out, p->est_us);
			fputs(" = ", out);
			ms(out, p->compute_us);
			fputs(" compute + ", out);
			ms(out, p->switch_us);
			fputs(" switches <span class=\"note\">(roofline estimate, not a measurement)</span>", out);
		} else {
			ms(out, p->switch_us);
			fputs(" of switches <span class=\"note\">(the target has no roofline figures)</span>", out);
		}
		if (p->n_uncosted) /* as `plan` says: their FLOPs count as 0 */
			fprintf(out, "; <span class=\"uncosted\">%" PRIu32 " of %" PRIu32 " layers without a cost</span> "
				     "<span class=\"note\">(a shape the estimate needs is unknown: counted as 0)</span>",
				p->n_uncosted, p->n_nodes);
		fputs("</dd>\n", out);
	}
	if (sum->n_top) {
		fputs("<dt>rules fired</dt><dd>", out);
		for (uint32_t i = 0; i < sum->n_top; i++) {
			fputs(i ? ", " : "", out);
			rule_link(out, sum->top[i].rule);
			fprintf(out, " &times;%" PRIu32, sum->top[i].count);
		}
		fputs("</dd>\n", out);
	}
	fputs("</dl>\n", out);
}

/* ---------------------------------------------------------------- partition */

static void seg_title(FILE *out, const struct al_plan *p, uint32_t k)
{
	const struct al_segment *g = &p->segments[k];
	char b[32];
	fprintf(out, "segment %" PRIu32 ": %s, %" PRIu32 " layer%s #%" PRIu32 "..#%" PRIu32 ", %s FLOPs", k,
		ali_unit_upper(g->unit), g->n_nodes, g->n_nodes == 1 ? "" : "s", g->first, g->last,
		ali_si(b, sizeof b, g->flops));
}

static void partition(struct html *h, uint32_t sec, const struct al_plan *p)
{
	FILE *out = h->out;
	fprintf(out, "<h3>Partition</h3>\n<div class=\"bar layers\" data-segments=\"%" PRIu32 "\" "
		     "title=\"segments, width by layers\">",
		p->n_segments);
	for (uint32_t k = 0; k < p->n_segments; k++) {
		fprintf(out, "<a class=\"seg %s\" href=\"#s%" PRIu32 "-%" PRIu32 "\" style=\"flex-grow:%" PRIu32
			     "\" title=\"",
			unit_class(p->segments[k].unit), sec, k, p->segments[k].n_nodes);
		seg_title(out, p, k);
		fputs("\"></a>", out);
	}
	fputs("</div>\n", out);
	if (p->total_flops > 0) {
		fputs("<div class=\"bar flops\" title=\"segments, width by FLOPs\">", out);
		for (uint32_t k = 0; k < p->n_segments; k++) {
			double share = p->segments[k].flops / p->total_flops;
			fprintf(out, "<span class=\"seg %s\" style=\"flex-grow:%.6f\" title=\"",
				unit_class(p->segments[k].unit), isfinite(share) && share > 0 ? share : 0.0);
			seg_title(out, p, k);
			fputs("\"></span>", out);
		}
		fputs("</div>\n", out);
	}
	fprintf(out, "<p class=\"legend\"><i class=\"u-ane\"></i>ANE<i class=\"u-gpu\"></i>GPU"
		     "<i class=\"u-cpu\"></i>CPU &nbsp; upper bar: layers, lower bar: FLOPs; %" PRIu32
		     " segment%s, %" PRIu32 " switch%s</p>\n",
		p->n_segments, p->n_segments == 1 ? "" : "s", p->switches, p->switches == 1 ? "" : "es");
	fprintf(out, "<details%s><summary>%" PRIu32 " segment%s</summary>\n<table class=\"segs\"><thead><tr>"
		     "<th class=\"num\">segment</th><th>unit</th><th class=\"num\">layers</th>"
		     "<th class=\"num\">first..last</th><th class=\"num\">FLOPs</th><th class=\"num\">share</th>"
		     "<th class=\"num\">est.</th></tr></thead><tbody>\n",
		p->n_segments <= 16 ? " open" : "", p->n_segments, p->n_segments == 1 ? "" : "s");
	for (uint32_t k = 0; k < p->n_segments; k++) {
		const struct al_segment *g = &p->segments[k];
		char b[32];
		fprintf(out, "<tr id=\"s%" PRIu32 "-%" PRIu32 "\"><td class=\"num\">%" PRIu32 "</td><td>", sec, k, k);
		put_unit(out, g->unit);
		fprintf(out, "</td><td class=\"num\">%" PRIu32 "</td><td class=\"num\"><a href=\"#r%" PRIu32
			     "-%" PRIu32 "\">#%" PRIu32 "</a>..#%" PRIu32 "</td><td class=\"num\">%s</td>"
			     "<td class=\"num\">%.1f%%</td><td class=\"num\">",
			g->n_nodes, sec, g->first, g->first, g->last, ali_si(b, sizeof b, g->flops),
			p->total_flops > 0 ? 100.0 * g->flops / p->total_flops : 0.0);
		if (p->timed)
			ms(out, g->est_us);
		else
			fputs("-", out);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></details>\n", out);
	if (p->switches) {
		fprintf(out, "<p class=\"note\">switches:");
		for (uint32_t k = 0; k < p->switches && k < 12; k++) {
			const struct al_switch *x = &p->switch_list[k];
			fprintf(out, "%s %s&rarr;%s (", k ? "," : "", ali_unit_upper(p->segments[x->from].unit),
				ali_unit_upper(p->segments[x->to].unit));
			ms(out, x->us);
			fputs(")", out);
		}
		fprintf(out, "%s</p>\n", p->switches > 12 ? ", &hellip;" : "");
	}
}

static void fixes(struct html *h, uint32_t sec, const struct al_plan *p, const struct al_dag *g)
{
	FILE *out = h->out;
	fputs("<h3>Cheapest fixes</h3>\n", out);
	if (!p->n_fixes) {
		fprintf(out, "<p>%s</p>\n",
			p->n_segments <= 1 && p->n_nodes == p->ane_nodes
				? "None needed: everything runs on the ANE."
				: "No rewrite of the fallback layers is estimated to save time.");
		return;
	}
	fputs("<p class=\"note\">Rewrite these layers (or move them to the app) so that they run on the ANE; "
	      "the gains are estimates.</p>\n<ol class=\"fixes\">\n",
	      out);
	for (uint32_t k = 0; k < p->n_fixes; k++) {
		const struct al_fix *f = &p->fixes[k];
		fputs("<li>", out);
		if (f->kind == AL_FIX_MODEL) {
			fputs("the model-level rule ", out);
			if (f->rule)
				rule_link(out, f->rule);
		} else {
			if (f->kind == AL_FIX_RULE)
				fprintf(out, "the %" PRIu32 " layers that ", f->n_nodes);
			else if (f->kind == AL_FIX_SEGMENT)
				fprintf(out, "the %" PRIu32 " fallback layers of one segment: ", f->n_nodes);
			if (f->kind == AL_FIX_RULE && f->rule) {
				rule_link(out, f->rule);
				fputs(" moves: ", out);
			}
			for (uint32_t i = 0; i < f->n_nodes && i < 6; i++) {
				const struct al_node *n = f->nodes[i];
				long idx = ali_dag_row_of(g, n); /* rows[r].index == r */
				fputs(i ? ", " : "", out);
				if (idx >= 0)
					fprintf(out, "<a href=\"#r%" PRIu32 "-%ld\">#%ld</a> ", sec, idx, idx);
				fputs("<code>", out);
				ali_put_esc(out, n ? n->name : "", AL_ESC_HTML, 60);
				fputs("</code>", out);
				if (f->kind == AL_FIX_NODE) {
					fputs(" (", out);
					esc(out, n ? n->type : "");
					if (f->rule) {
						fputs(", ", out);
						rule_link(out, f->rule);
					}
					fputs(")", out);
				}
			}
			if (f->n_nodes > 6)
				fputs(", &hellip;", out);
		}
		fprintf(out, "<br><span class=\"note\">segments %" PRIu32 " &rarr; %" PRIu32 ", switches %" PRIu32
			     " &rarr; %" PRIu32 ", est. gain ",
			f->segments_before, f->segments_after, f->switches_before, f->switches_after);
		ms(out, f->gain_us);
		fputs("</span></li>\n", out);
	}
	fputs("</ol>\n", out);
}

/* ---------------------------------------------------------------- graph */

struct page {
	uint32_t first, n;     /* graph nodes [first, first + n) */
	uint32_t *level;       /* per node: its row (a layer of the drawing) */
	uint32_t *order;       /* nodes by level, then position */
	uint32_t *lstart;      /* order[lstart[l] .. lstart[l + 1]) is level l */
	uint32_t *cstart;      /* readers of node i on the page: cadj[cstart[i] .. cstart[i + 1]) */
	uint32_t *cadj;
	uint32_t n_cadj;
	double *x, *y, *key;
};

static uint32_t edge_lower_bound(const struct al_dag *g, uint32_t to)
{
	uint32_t lo = 0, hi = g->n_edges; /* edges are sorted by `to` */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->edges[mid].to < to)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Mean x of a node's neighbours on the page: what it reads (down) or what reads
 * it (up); its own x when it has none. */
static double neighbour_x(const struct al_dag *g, const struct page *pg, uint32_t i, bool down)
{
	double sum = 0;
	uint32_t cnt = 0;
	if (down) {
		for (uint32_t e = edge_lower_bound(g, pg->first + i); e < g->n_edges && g->edges[e].to == pg->first + i; e++)
			if (g->edges[e].from >= pg->first) {
				sum += pg->x[g->edges[e].from - pg->first];
				cnt++;
			}
	} else if (pg->cadj) {
		for (uint32_t k = pg->cstart[i]; k < pg->cstart[i + 1]; k++) {
			sum += pg->x[pg->cadj[k]];
			cnt++;
		}
	}
	return cnt ? sum / cnt : pg->x[i];
}

/* x and y of every node, level by level: lines of at most MAX_COLS, all
 * left-aligned, so that a chain is a straight column. */
static void place(struct page *pg, uint32_t levels, double *width, double *height)
{
	double y = MARGIN, w = 0;
	for (uint32_t lv = 0; lv < levels; lv++)
		for (uint32_t k = pg->lstart[lv]; k < pg->lstart[lv + 1]; k += MAX_COLS) {
			uint32_t cols = pg->lstart[lv + 1] - k < MAX_COLS ? pg->lstart[lv + 1] - k : MAX_COLS;
			for (uint32_t c = 0; c < cols; c++) {
				pg->x[pg->order[k + c]] = MARGIN + c * (double)(NODE_W + GAP_X);
				pg->y[pg->order[k + c]] = y;
			}
			double lw = MARGIN * 2 + cols * (double)(NODE_W + GAP_X) - GAP_X;
			if (lw > w)
				w = lw;
			y += NODE_H + GAP_Y;
		}
	*width = w + 80; /* room for the bends of long edges */
	*height = y - GAP_Y + MARGIN;
}

/* A layered drawing of one page (Sugiyama-style, kept simple): a node's level is
 * the longest path to it from the page's start, then it moves down to just above
 * its first reader (so the side chains that prepare a constant sit where it is
 * used, not all in the top rows); the nodes of a level are ordered by the mean
 * position of their neighbours, in three sweeps (down, up, down). */
static void layout(const struct al_dag *g, struct page *pg, double *width, double *height)
{
	uint32_t n = pg->n, levels = 0;
	uint32_t e0 = edge_lower_bound(g, pg->first), e1 = edge_lower_bound(g, pg->first + n);
	for (uint32_t i = 0; i < n; i++)
		pg->level[i] = 0;
	for (uint32_t e = e0; e < e1; e++) { /* edges in `to` order: producers are final */
		const struct al_edge *x = &g->edges[e];
		if (x->from >= pg->first && pg->level[x->from - pg->first] + 1 > pg->level[x->to - pg->first])
			pg->level[x->to - pg->first] = pg->level[x->from - pg->first] + 1;
	}
	/* the readers of each node on the page (CSR); without memory, no move down
	 * and no upward sweep */
	ali_free(pg->cadj);
	pg->cadj = NULL;
	uint32_t m = 0;
	for (uint32_t i = 0; i <= n; i++)
		pg->cstart[i] = 0;
	for (uint32_t e = e0; e < e1; e++)
		if (g->edges[e].from >= pg->first) {
			pg->cstart[g->edges[e].from - pg->first + 1]++;
			m++;
		}
	pg->cadj = ali_malloc((size_t)(m ? m : 1) * sizeof *pg->cadj);
	if (pg->cadj) {
		for (uint32_t i = 0; i < n; i++)
			pg->cstart[i + 1] += pg->cstart[i];
		for (uint32_t i = 0; i < n; i++)
			pg->order[i] = pg->cstart[i]; /* fill position */
		for (uint32_t e = e0; e < e1; e++)
			if (g->edges[e].from >= pg->first)
				pg->cadj[pg->order[g->edges[e].from - pg->first]++] = g->edges[e].to - pg->first;
		for (uint32_t i = n; i-- > 0;) { /* readers first: reverse model order */
			uint32_t low = UINT32_MAX;
			for (uint32_t k = pg->cstart[i]; k < pg->cstart[i + 1]; k++)
				if (pg->level[pg->cadj[k]] < low)
					low = pg->level[pg->cadj[k]];
			if (low != UINT32_MAX && low > 0 && low - 1 > pg->level[i])
				pg->level[i] = low - 1;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (pg->level[i] + 1 > levels)
			levels = pg->level[i] + 1;
	/* counting sort by level, model order within a level */
	for (uint32_t lv = 0; lv <= levels; lv++)
		pg->lstart[lv] = 0;
	for (uint32_t i = 0; i < n; i++)
		pg->lstart[pg->level[i] + 1]++;
	for (uint32_t lv = 0; lv < levels; lv++)
		pg->lstart[lv + 1] += pg->lstart[lv];
	for (uint32_t lv = 0; lv < levels; lv++)
		pg->y[lv] = pg->lstart[lv]; /* here: the next free slot of level lv */
	for (uint32_t i = 0; i < n; i++)
		pg->order[(uint32_t)pg->y[pg->level[i]]++] = i;
	place(pg, levels, width, height);
	for (int sweep = 0; sweep < 3; sweep++) {
		bool down = sweep != 1;
		if (!down && !pg->cadj)
			continue;
		for (uint32_t k = 0; k < n; k++)
			pg->key[pg->order[k]] = neighbour_x(g, pg, pg->order[k], down);
		for (uint32_t lv = 0; lv < levels; lv++) /* insertion sort: stable, pages are small */
			for (uint32_t k = pg->lstart[lv] + 1; k < pg->lstart[lv + 1]; k++) {
				uint32_t v = pg->order[k], j = k;
				while (j > pg->lstart[lv] && pg->key[pg->order[j - 1]] > pg->key[v]) {
					pg->order[j] = pg->order[j - 1];
					j--;
				}
				pg->order[j] = v;
			}
		place(pg, levels, width, height);
	}
}

/* fprintf for the per-layer markup (the graph's nodes and edges, the layer
 * table's rows: ~300k calls for a 27k-op model), knowing only %s, %d, %u
 * (PRIu32), %.0f and %%. Why: the CLI links OpenBLAS, whose libgfortran brings
 * libquadmath, which registers a printf modifier, and glibc then runs every
 * printf of the process through its slow positional path: ~5k instructions a
 * call here, 1.1 G of the 2.3 G instructions `check --format html` took on
 * bench/llm_check.sh's package. */
static void put_uint(FILE *out, unsigned long long v)
{
	char b[24], *e = b + sizeof b, *q = e;
	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	fwrite(q, 1, (size_t)(e - q), out);
}

static void hput(FILE *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	for (const char *f = fmt; *f;) {
		const char *pc = strchr(f, '%');
		size_t lit = pc ? (size_t)(pc - f) : strlen(f);
		fwrite(f, 1, lit, out);
		if (!pc)
			break;
		f = pc + 1;
		if (*f == 's') {
			const char *a = va_arg(ap, const char *);
			fputs(a ? a : "(null)", out);
		} else if (*f == 'u') {
			put_uint(out, va_arg(ap, unsigned));
		} else if (*f == 'd') {
			int v = va_arg(ap, int);
			if (v < 0)
				fputc('-', out);
			put_uint(out, v < 0 ? 0ull - (unsigned long long)(long long)v : (unsigned long long)v);
		} else if (strncmp(f, ".0f", 3) == 0) {
			/* "%.0f": round half to even as printf does (nearbyint in the
			 * default rounding mode), "-0" for a negative that rounds to 0 */
			double v = va_arg(ap, double), r = nearbyint(v);
			if (!(r > -1e18 && r < 1e18)) {
				fprintf(out, "%.0f", v);
			} else {
				if (signbit(r))
					fputc('-', out);
				put_uint(out, (unsigned long long)fabs(r));
			}
			f += 2;
		} else if (*f == '%') {
			fputc('%', out);
		} else { /* not one of ours: a mistake in this file */
			break;
		}
		f++;
	}
	va_end(ap);
}

static void edge_path(FILE *out, const struct page *pg, uint32_t a, uint32_t b, bool sw)
{
	double x1 = pg->x[a] + NODE_W / 2.0, y1 = pg->y[a] + NODE_H;
	double x2 = pg->x[b] + NODE_W / 2.0, y2 = pg->y[b];
	uint32_t span = pg->level[b] - pg->level[a];
	hput(out, "<path class=\"e%s\" d=\"M%.0f %.0f C", sw ? " sw" : "", x1, y1);
	if (span <= 1 || x1 != x2) {
		double dy = (y2 - y1) / 2 < 40 ? (y2 - y1) / 2 : 40;
		hput(out, "%.0f %.0f %.0f %.0f %.0f %.0f\"/>", x1, y1 + dy, x2, y2 - dy, x2, y2);
	} else { /* a skip connection down one column bends out to the right */
		double bend = NODE_W / 2.0 + 18 + 4 * (span < 10 ? span : 10);
		hput(out, "%.0f %.0f %.0f %.0f %.0f %.0f\"/>", x1 + bend, y1 + 30, x2 + bend, y2 - 30, x2, y2);
	}
}

static void graph_node(struct html *h, uint32_t sec, const struct al_dag *g, const struct al_plan *p,
		       const struct page *pg, uint32_t i, bool stub)
{
	FILE *out = h->out;
	const struct al_row *row = &g->rows[g->top[pg->first + i]];
	const struct al_node *n = row->node;
	const struct al_verdict *v = row->verdict;
	enum al_unit u = ali_row_unit(row, p);
	double x = pg->x[i], y = pg->y[i];
	hput(out, "<a href=\"#r%" PRIu32 "-%" PRIu32 "\"><g class=\"n %s%s%s\">", sec, row->index,
		unit_class(u), v->ane ? "" : " fb", ali_row_moved(row, p) ? " mv" : "");
	if (stub)
		hput(out, "<path class=\"stub\" d=\"M%.0f %.0f v14\"/>", x + NODE_W / 2.0, y - 14);
	hput(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" rx=\"5\"/>", x, y, NODE_W, NODE_H);
	hput(out, "<text x=\"%.0f\" y=\"%.0f\">", x + 7, y + 15);
	ali_put_esc(out, n->name, AL_ESC_HTML, LABEL_CHARS);
	hput(out, "</text><text class=\"t2\" x=\"%.0f\" y=\"%.0f\">", x + 7, y + 29);
	ali_put_esc(out, n->type, AL_ESC_HTML, 18);
	hput(out, " &middot; %s", ali_unit_upper(u));
	if (g->nested[pg->first + i])
		hput(out, " &middot; +%" PRIu32, g->nested[pg->first + i]);
	hput(out, "</text><title>#%" PRIu32 " ", row->index);
	esc(out, n->name);
	fputs(" (", out);
	esc(out, n->type);
	hput(out, "): %s", ali_unit_upper(u));
	if (!v->ane)
		hput(out, ", its verdict %s", al_unit_name(v->unit));
	for (uint32_t r = 0; r < v->n_rules; r++) {
		hput(out, "; %s ", v->rules[r]->id);
		esc(out, v->reasons[r]);
	}
	if (g->nested[pg->first + i])
		hput(out, "; %" PRIu32 " nested layers/ops folded in", g->nested[pg->first + i]);
	fputs("</title></g></a>\n", out);
}

static void graph(struct html *h, uint32_t sec, const struct al_dag *g, const struct al_plan *p)
{
	FILE *out = h->out;
	fputs("<h3>Dataflow graph</h3>\n", out);
	if (!g->n) {
		fputs("<p class=\"note\">No layers to draw.</p>\n", out);
		return;
	}
	uint32_t pages = (g->n + GRAPH_PAGE - 1) / GRAPH_PAGE;
	fprintf(out, "<p class=\"note\">Coloured by the unit the plan puts each layer on; thick border: "
		     "its own verdict falls back; dashed border: moved off the ANE by the partition "
		     "policy; red dashed edges: a switch between units; a dotted stub: input from an "
		     "earlier page. %s%s%" PRIu32 " node%s",
		g->n_consts ? "Const ops are left out; " : g->n_hidden ? "loadConstant layers are left out; " : "",
		g->n_rows - g->n_consts - g->n_hidden > g->n ? "nested layers/ops are folded into their owner (+N); "
							       : "",
		g->n, g->n == 1 ? "" : "s");
	if (pages > 1)
		fprintf(out, " on %" PRIu32 " pages of up to %d", pages, GRAPH_PAGE);
	fputs(". Hover a node for its full name; click it for its facts (without JavaScript: its row).</p>\n",
	      out);
	struct page pg = {0};
	pg.level = ali_calloc(GRAPH_PAGE, sizeof *pg.level);
	pg.order = ali_calloc(GRAPH_PAGE, sizeof *pg.order);
	pg.lstart = ali_calloc(GRAPH_PAGE + 1, sizeof *pg.lstart);
	pg.cstart = ali_calloc(GRAPH_PAGE + 1, sizeof *pg.cstart);
	pg.x = ali_calloc(GRAPH_PAGE, sizeof *pg.x);
	pg.y = ali_calloc(GRAPH_PAGE, sizeof *pg.y);
	pg.key = ali_calloc(GRAPH_PAGE, sizeof *pg.key);
	bool *stub = ali_calloc(GRAPH_PAGE, sizeof *stub);
	if (!pg.level || !pg.order || !pg.lstart || !pg.cstart || !pg.x || !pg.y || !pg.key || !stub) {
		fputs("<p class=\"err\">out of memory: no graph</p>\n", out);
		goto done;
	}
	for (uint32_t first = 0; first < g->n; first += GRAPH_PAGE) {
		pg.first = first;
		pg.n = g->n - first < GRAPH_PAGE ? g->n - first : GRAPH_PAGE;
		double w, ht;
		layout(g, &pg, &w, &ht);
		uint32_t r0 = g->rows[g->top[first]].index, r1 = g->rows[g->top[first + pg.n - 1]].index;
		fprintf(out, "<details class=\"page\"%s><summary>layers #%" PRIu32 "&ndash;#%" PRIu32 " (%" PRIu32
			     " node%s)</summary>\n<div class=\"zoom\" hidden><button type=\"button\" data-z=\"1.25\" "
			     "title=\"zoom in\">+</button><button type=\"button\" data-z=\"0.8\" title=\"zoom out\">"
			     "&minus;</button><button type=\"button\" data-z=\"0\" title=\"fit the width\">fit</button>"
			     "<span class=\"note\"> ctrl+wheel zooms, drag pans, a click on a node shows its "
			     "facts</span></div><div class=\"svgwrap\"><svg class=\"graph\" "
			     "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 "
			     "%.0f %.0f\" role=\"img\" aria-label=\"dataflow graph, layers %" PRIu32 " to %" PRIu32
			     "\">\n",
			first == 0 ? " open" : "", r0, r1, pg.n, pg.n == 1 ? "" : "s", w, ht, w, ht, r0, r1);
		uint32_t e0 = edge_lower_bound(g, first), e1 = edge_lower_bound(g, first + pg.n);
		memset(stub, 0, GRAPH_PAGE * sizeof *stub);
		for (uint32_t e = e0; e < e1; e++) {
			const struct al_edge *x = &g->edges[e];
			if (x->from < first) {
				stub[x->to - first] = true;
				continue;
			}
			const struct al_row *ra = &g->rows[g->top[x->from]], *rb = &g->rows[g->top[x->to]];
			bool sw = ali_row_unit(ra, p) != ali_row_unit(rb, p);
			edge_path(out, &pg, x->from - first, x->to - first, sw);
		}
		fputc('\n', out);
		for (uint32_t i = 0; i < pg.n; i++)
			graph_node(h, sec, g, p, &pg, i, stub[i]);
		fputs("</svg></div></details>\n", out);
	}
done:
	ali_free(pg.level);
	ali_free(pg.order);
	ali_free(pg.lstart);
	ali_free(pg.cstart);
	ali_free(pg.cadj);
	ali_free(pg.x);
	ali_free(pg.y);
	ali_free(pg.key);
	ali_free(stub);
}

/* ---------------------------------------------------------------- the layer table */

static void layer_row(struct html *h, uint32_t sec, const struct al_row *row, const struct al_plan *p)
{
	FILE *out = h->out;
	const struct al_node *n = row->node;
	const struct al_verdict *v = row->verdict;
	enum al_unit u = ali_row_unit(row, p);
	bool moved = ali_row_moved(row, p);
	const char *cls = !v->ane ? "fb" : moved ? "mv" : u != AL_UNIT_ANE ? "mv" : "ok";
	hput(out, "<tr id=\"r%" PRIu32 "-%" PRIu32 "\" class=\"%s %s\"", sec, row->index, cls, unit_class(u));
	char params[2048]; /* the graph panel shows them (report_params.c) */
	if (ali_node_params(n, params, sizeof params)) {
		fputs(" data-params=\"", out);
		for (char *line = params, *nl; line; line = nl ? nl + 1 : NULL) { /* lines escaped one by one */
			nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			ali_put_esc(out, line, AL_ESC_HTML, 0);
			fputs(nl ? "&#10;" : "", out);
		}
		fputc('"', out);
	}
	hput(out, "><td class=\"num\">%" PRIu32 "</td><td class=\"name\" title=\"in: ", row->index);
	for (uint32_t k = 0; k < n->n_inputs && k < 8; k++) { /* the panel shows these */
		fputs(k ? ", " : "", out);
		ali_put_esc(out, n->inputs[k], AL_ESC_HTML, 80);
	}
	fputs(n->n_inputs > 8 ? ", &hellip;" : "", out);
	fputs(" &rarr; out: ", out);
	for (uint32_t k = 0; k < n->n_outputs && k < 8; k++) {
		fputs(k ? ", " : "", out);
		ali_put_esc(out, n->outputs[k], AL_ESC_HTML, 80);
	}
	fputs(n->n_outputs > 8 ? ", &hellip;\">" : "\">", out);
	int depth = n->owner ? n->owner->depth : 0;
	if (depth > 0)
		hput(out, "<span style=\"padding-left:%dem\">", depth > 8 ? 8 : depth);
	else
		fputs("<span>", out);
	esc(out, n->name);
	fputs("</span>", out);
	if (n->owner && (n->owner->function || n->owner->depth > 0)) {
		fputs("<span class=\"in\">in ", out);
		esc(out, n->owner->block ? n->owner->block : n->owner->function);
		fputs("</span>", out);
	}
	const char *weights = ali_node_weights(n); /* where the op came from, as far as the file says */
	if (weights) {
		fputs("<span class=\"in\">weights ", out);
		esc(out, weights);
		fputs("</span>", out);
	}
	fputs("</td><td>", out);
	esc(out, n->type);
	fputs("</td><td>", out);
	if (v->ane)
		put_unit(out, AL_UNIT_ANE);
	else
		put_unit(out, v->unit);
	fputs("</td><td>", out);
	put_unit(out, u);
	if (v->verdict == AL_VERDICT_UNCERTAIN) { /* issue #30: how sure, on hover */
		char why[160];
		fprintf(out, " <span class=\"why\" title=\"p_ane %.2f: ", v->p_ane);
		ali_put_esc(out, ali_uncertain_text(v, why, sizeof why), AL_ESC_HTML, 0);
		fputs("\">? uncertain</span>", out);
	}
	if (p && row->plan >= 0) {
		hput(out, " <a class=\"why\" href=\"#s%" PRIu32 "-%" PRIu32 "\">segment %" PRIu32 "</a>", sec,
			p->segment[row->plan], p->segment[row->plan]);
		if (moved) { /* the rule that moved it, as check names it */
			const struct al_rule *mr = ali_place_rule(p->place[row->plan], p->model_rule, NULL);
			hput(out, "<span class=\"why\">%s</span>", mr ? mr->id : al_place_name(p->place[row->plan]));
		}
	}
	char sh[128] = "-";
	if (n->n_outputs && n->out_shapes)
		ali_shape_format(&n->out_shapes[0], sh, sizeof sh);
	fputs("</td><td>", out);
	esc(out, sh);
	if (n->n_outputs > 1)
		hput(out, " <span class=\"note\">+%" PRIu32 "</span>", n->n_outputs - 1);
	char b[32];
	hput(out, "</td><td class=\"num\">%s</td><td class=\"num\">",
		n->cost.known ? ali_si(b, sizeof b, n->cost.flops) : "?");
	if (n->cost.param_bytes)
		hput(out, "%s", ali_si(b, sizeof b, (double)n->cost.param_bytes));
	else
		fputs("-", out);
	fputs("</td><td class=\"reasons\">", out);
	for (uint32_t r = 0; r < v->n_rules; r++) {
		note_rule(h, v->rules[r]);
		fputs(r ? "<br>" : "", out);
		rule_link(out, v->rules[r]);
		fputs(" ", out);
		esc(out, v->reasons[r]);
	}
	fputs("</td><td class=\"fix\">", out);
	for (uint32_t r = 0; r < v->n_rules; r++) {
		bool seen = false;
		for (uint32_t q = 0; q < r; q++)
			seen |= v->rules[q]->fix == v->rules[r]->fix;
		if (seen || !v->rules[r]->fix)
			continue;
		fputs(r ? "<br>" : "", out);
		esc(out, v->rules[r]->fix);
	}
	fputs("</td></tr>\n", out);
}

static const char table_head[] =
	"<table class=\"layers\"><colgroup><col class=\"c-i\"><col class=\"c-n\"><col class=\"c-t\">"
	"<col class=\"c-v\"><col class=\"c-u\"><col class=\"c-s\"><col class=\"c-f\"><col class=\"c-w\">"
	"<col class=\"c-r\"><col class=\"c-x\"></colgroup>";

/* The table in blocks of TABLE_CHUNK rows, each its own fixed-layout table in a
 * <div class="rows">, which CSS gives content-visibility: auto: the browser lays
 * out only the blocks near the screen, so a model of thousands of layers opens
 * as fast as a small one (find-in-page, links to rows and the filters still
 * see every row). The columns line up: same widths in every block. */
static void layer_table(struct html *h, uint32_t sec, const struct al_dag *g, const struct al_plan *p)
{
	FILE *out = h->out;
	fputs("<h3>Layers</h3>\n", out);
	uint32_t shown = 0, total = g->n_rows - g->n_consts;
	for (uint32_t r = 0; r < g->n_rows; r++) {
		if (ali_node_is_const(g->rows[r].node))
			continue;
		if (shown % TABLE_CHUNK == 0) {
			uint32_t rows = total - shown < TABLE_CHUNK ? total - shown : TABLE_CHUNK;
			if (shown)
				fputs("</tbody></table></div>\n", out);
			fprintf(out, "<div class=\"rows\" style=\"contain-intrinsic-size:auto %" PRIu32 "px\">%s", rows * 44,
				table_head);
			if (!shown)
				fputs("<thead><tr><th class=\"num\">#</th><th>name</th><th>type</th><th>verdict</th>"
				      "<th>runs on</th><th>output shape</th><th class=\"num\">FLOPs</th>"
				      "<th class=\"num\">weights (B)</th><th>rules and reasons</th><th>suggested fix</th>"
				      "</tr></thead>",
				      out);
			fputs("<tbody>\n", out);
		}
		layer_row(h, sec, &g->rows[r], p);
		shown++;
	}
	if (shown)
		fputs("</tbody></table></div>\n", out);
}

/* ---------------------------------------------------------------- one model */

static void item_warnings(struct html *h, const struct al_report_item *it)
{
	FILE *out = h->out;
	size_t warned = 0;
	for (size_t i = 0; i < al_diags_count(it->diags); i++) {
		const struct al_diag *x = al_diags_get(it->diags, i);
		if (x->severity != AL_SEV_WARNING)
			continue;
		if (!warned++)
			fputs("<ul class=\"note\">\n", out);
		fputs("<li>warning: ", out);
		if (x->where) {
			esc(out, x->where);
			fputs(": ", out);
		}
		esc(out, x->msg);
		fputs("</li>\n", out);
	}
	if (warned)
		fputs("</ul>\n", out);
}

static void html_model(void *vctx, const struct al_report_item *it, const struct al_view *v)
{
	struct html *h = vctx;
	FILE *out = h->out;
	const struct al_submodel *s = v->s;
	const struct al_plan *p = v->plan;
	const char *error = v->error;
	uint32_t sec = h->sections++;
	struct al_summary sum;
	ali_summarize(s, v, &sum);
	fprintf(out, "<section class=\"model\" id=\"m%" PRIu32 "\" data-layers=\"%" PRIu32 "\">\n<h2>", sec,
		sum.nodes);
	esc(out, s->path);
	fputs(" <small>", out);
	esc(out, s->type);
	fprintf(out, ", spec %d (", s->spec_version);
	esc(out, al_spec_min_os(s->spec_version));
	fputs(")</small></h2>\n", out);
	if (it != h->last_item) {
		h->last_item = it;
		item_warnings(h, it);
	}
	if (s->short_description && *s->short_description) {
		fputs("<p class=\"note\">", out);
		ali_put_esc(out, s->short_description, AL_ESC_HTML, 300);
		fputs("</p>\n", out);
	}
	if (!p) {
		fputs("<p class=\"err\">plan failed: ", out);
		esc(out, error ? error : "?");
		fputs("</p>\n", out);
	}
	facts(h, s, p, &sum);
	struct ali_failing fl; /* what fails the check, as the exit status counts it */
	ali_failing_count(h->o, ali_item_check(it, h->o), v, s, &fl);
	if (fl.n) {
		fprintf(out, "<p class=\"err\" data-failing=\"%" PRIu32 "\">failing: %" PRIu32 " finding%s:", fl.n, fl.n,
			fl.n == 1 ? "" : "s");
		for (uint32_t i = 0; i < fl.n_rules; i++)
			fprintf(out, "%s %s x%" PRIu32, i ? "," : "", fl.by_rule[i].rule->id, fl.by_rule[i].count);
		fputs("</p>\n", out);
	}
	const struct al_finding *findings;
	uint32_t n_findings = ali_view_findings(v, s, &findings);
	if (n_findings) {
		fputs("<h3>Model-level findings</h3>\n<ul>\n", out);
		for (uint32_t i = 0; i < n_findings; i++) {
			const struct al_finding *f = &findings[i];
			note_rule(h, f->rule);
			fputs("<li>", out);
			rule_link(out, f->rule);
			fprintf(out, " %s [%c] ", al_rule_kind_name(f->rule->kind), f->rule->confidence);
			esc(out, f->reason);
			if (f->rule->kind != AL_RULE_WARN) { /* where its layers went, as the rows say */
				const char *to = ali_moved_to(&sum, f->rule);
				fprintf(out, " (&rarr; %s)", to ? to : al_unit_name(f->rule->unit));
			}
			fputs("</li>\n", out);
		}
		fputs("</ul>\n", out);
	}
	if (!s->n_graphs) {
		if (s->n_children)
			fprintf(out, "<p>A pipeline of %" PRIu32 " models: each follows as a section of its own.</p>\n",
				s->n_children);
		else
			fputs("<p>No layers: the ANE has nothing to run in this model.</p>\n", out);
		fputs("</section>\n", out);
		return;
	}
	struct al_dag g;
	if (!ali_dag_build(v, &g)) {
		fputs("<p class=\"err\">out of memory: no graph or table</p>\n</section>\n", out);
		return;
	}
	if (p && p->n_nodes) {
		partition(h, sec, p);
		fixes(h, sec, p, &g);
	}
	graph(h, sec, &g, p);
	layer_table(h, sec, &g, p);
	ali_dag_free(&g);
	fputs("</section>\n", out);
}

/* ---------------------------------------------------------------- the page */

static bool http_url(const char *u)
{
	return u && (strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0);
}

static void rules_section(struct html *h)
{
	FILE *out = h->out;
	if (!h->n_fired)
		return;
	fputs("<section class=\"rules\" id=\"rules\">\n<h2>Rules that fired</h2>\n", out);
	/* in table order */
	const struct al_rule **list = NULL;
	size_t n = ali_rule_list(h->o->check ? h->o->check->user_rules : NULL, &list);
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < (pass ? h->n_fired : n); i++) {
			const struct al_rule *r = pass ? h->fired[i] : list[i];
			bool fired = false, listed = false;
			for (size_t k = 0; k < h->n_fired && !fired; k++)
				fired = h->fired[k] == r;
			for (size_t k = 0; pass && k < n && !listed; k++)
				listed = list[k] == r;
			if (!fired || listed) /* pass 1: fired rules not in the table (none expected) */
				continue;
			char fam[128];
			al_rule_families(r, fam, sizeof fam);
			fputs("<div class=\"rule\" id=\"rule-", out);
			esc(out, r->id);
			fputs("\"><p><b class=\"rid\">", out);
			esc(out, r->id);
			fputs("</b> <code>", out);
			esc(out, r->name);
			fputs("</code> &mdash; ", out);
			esc(out, r->title);
			fprintf(out, "</p><p class=\"note\">%s", al_rule_kind_name(r->kind));
			if (r->kind != AL_RULE_WARN)
				fprintf(out, ", work goes to %s", al_unit_name(r->unit));
			fprintf(out, "; confidence %c (%s); families ", r->confidence ? r->confidence : '?',
				r->confidence == 'A'   ? "documented or stated by Apple"
				: r->confidence == 'M' ? "measured by a named third party"
						       : "a guess or anecdote, no measurement");
			esc(out, fam);
			if (r->origin) {
				fputs("; defined in ", out);
				esc(out, r->origin);
			}
			fputs("</p>\n", out);
			if (r->why) {
				fputs("<p><b>Why:</b> ", out);
				esc(out, r->why);
				fputs("</p>\n", out);
			}
			if (r->fix) {
				fputs("<p><b>Fix:</b> ", out);
				esc(out, r->fix);
				fputs("</p>\n", out);
			}
			fputs("<p class=\"note\">Evidence: ", out);
			esc(out, r->provenance ? r->provenance : "-");
			if (http_url(r->url)) {
				fputs(" &mdash; <a rel=\"noreferrer noopener\" href=\"", out);
				esc(out, r->url);
				fputs("\">", out);
				esc(out, r->url);
				fputs("</a>", out);
			}
			fputs("</p></div>\n", out);
		}
	ali_free(list);
	fputs("</section>\n", out);
}

static void html_report(FILE *out, const struct al_report_item *items, size_t n,
			const struct al_report_opts *o)
{
	char hash[64];
	csp_hash(script, hash);
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		     "style-src 'unsafe-inline'; script-src 'sha256-%s'; img-src 'none'; base-uri 'none'; "
		     "form-action 'none'\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<meta name=\"generator\" content=\"anelint %s\">\n<title>anelint report",
		hash, ANELINT_VERSION);
	size_t models = 0;
	for (size_t i = 0; i < n; i++)
		if (items[i].model && models++ == 0) {
			fputs(": ", out);
			ali_put_esc(out, items[i].path, AL_ESC_HTML, 80);
		}
	if (models > 1)
		fprintf(out, " and %zu more", models - 1);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
	fputs("<input type=\"checkbox\" id=\"only-fb\" class=\"sr\">\n"
	      "<header class=\"top\"><h1>anelint report</h1>\n"
	      "<p class=\"sub\">Where Core ML is predicted to run every layer/op: the Apple Neural Engine "
	      "(ANE), the GPU or the CPU, and why. Predictions from the model file, not measurements.</p>\n"
	      "<div class=\"tools\"><label for=\"only-fb\" class=\"toggle\">only fallbacks</label>"
	      "<input type=\"search\" id=\"q\" placeholder=\"search names, types, rule ids\" aria-label=\"search layer names, "
	      "types and rule ids\" hidden><span id=\"shown\" aria-live=\"polite\"></span></div>\n"
	      "<noscript><p class=\"note\">JavaScript is off: everything is shown and \"only fallbacks\" "
	      "works; the search needs JavaScript.</p></noscript>\n</header>\n<main>\n",
	      out);
	struct html h = {.out = out, .o = o};
	bool errors = false;
	for (size_t i = 0; i < n; i++) {
		if (items[i].model)
			continue;
		if (!errors)
			fputs("<section class=\"errors\"><h2>Models that could not be read</h2>\n<ul>\n", out);
		errors = true;
		fputs("<li class=\"err\">", out);
		esc(out, items[i].path);
		fputs(": ", out);
		esc(out, al_status_str(items[i].status));
		for (size_t k = 0; k < al_diags_count(items[i].diags); k++) {
			const struct al_diag *x = al_diags_get(items[i].diags, k);
			if (x->severity != AL_SEV_ERROR)
				continue;
			fputs("<br>", out);
			if (x->where) {
				esc(out, x->where);
				fputs(": ", out);
			}
			esc(out, x->msg);
		}
		fputs("</li>\n", out);
	}
	if (errors)
		fputs("</ul></section>\n", out);
	ali_each_plan(items, n, o, html_model, &h);
	ali_html_comparisons(out, items, n); /* report --evidence: report_evidence.c */
	rules_section(&h);
	ali_free(h.fired);
	fputs("<aside id=\"panel\" hidden aria-live=\"polite\"><button type=\"button\" id=\"panel-close\" "
	      "title=\"close\">&times;</button><h4 id=\"panel-title\"></h4><dl id=\"panel-body\"></dl>"
	      "<a id=\"panel-row\" href=\"#\">the row in the table</a></aside>\n", out);
	fprintf(out, "</main>\n<footer>anelint %s &middot; estimates come from a roofline model and "
		     "published switch costs, not from a device; see the rules' evidence for how sure each "
		     "verdict is.</footer>\n<script>%s</script>\n</body>\n</html>\n",
		ANELINT_VERSION, script);
}

const struct al_sink ali_sink_html = {
	.name = "html",
	.check = html_report,
	.plan = html_report,
	.extensions = "html,htm",
	.shows_plans = true,
};
