"""Convert Apache Kafka's docs/ HTML (at HEAD of a clone of apache/kafka) into a retrieval corpus of sections: one
document per heading of a page, its prose and its code listings in reading order.

Usage: kafka_docs_sections.py KAFKA_GIT_DIR OUT_CORPUS.jsonl

Each line: {"doc_id": n, "title": heading, "text": section text, "doc": "<file>#<anchor or heading>"}; `doc` is the
string the questions' `gold_docs` name a section by.
"""
import json, re, sys
from html.parser import HTMLParser
from kafka_docs_pages import page_html, pages

G = sys.argv[1]

BLOCK = {'p', 'div', 'ul', 'ol', 'li', 'table', 'tr', 'dl', 'dt', 'dd', 'blockquote', 'section', 'br', 'hr',
         'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'}
CELL = {'td', 'th'}
HEAD = {'h1', 'h2', 'h3', 'h4', 'h5', 'h6'}

class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items = []     # ('h', text, anchor) or ('t', text, None) or ('c', code, None)
        self.buf = []
        self.skip = 0
        self.pre = 0
        self.inhead = None
        self.anchor = None
    def flush(self):
        raw = ''.join(self.buf)
        self.buf = []
        if self.pre:
            t = raw.strip('\n')
            if t.strip():
                self.items.append(('c', t, None))
            return
        t = re.sub(r'\s+', ' ', raw).strip()
        if t:
            self.items.append(('h' if self.inhead else 't', t, self.anchor if self.inhead else None))
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ('script', 'style'):
            self.flush(); self.skip += 1; return
        if self.skip: return
        if tag == 'pre':
            self.flush(); self.pre += 1; return
        if self.pre: return
        if tag in CELL:
            self.buf.append(' | ' if self.buf else '')
            return
        if tag in BLOCK:
            self.flush()
            if tag in HEAD:
                self.inhead = tag
                self.anchor = a.get('id')
        if self.inhead and tag == 'a' and (a.get('id') or a.get('name')) and not self.anchor:
            self.anchor = a.get('id') or a.get('name')
    def handle_endtag(self, tag):
        if tag in ('script', 'style'):
            self.skip = max(0, self.skip - 1); return
        if self.skip: return
        if tag == 'pre':
            self.flush(); self.pre = max(0, self.pre - 1); return
        if self.pre: return
        if tag in BLOCK:
            self.flush()
            if tag in HEAD:
                self.inhead = None
    def handle_data(self, d):
        if not self.skip: self.buf.append(d)
    def close(self):
        super().close(); self.flush()

def convert(path):
    html = page_html(G, path)
    p = P(); p.feed(html); p.close()
    sections, cur = [], None
    for kind, t, anchor in p.items:
        t = t.replace('{{fullDotVersion}}', '4.0.0').replace('{{dotVersion}}', '4.0').replace('{{scalaVersion}}', '2.13')
        t = re.sub(r'\{\{[^}]*\}\}', '', t)
        if kind == 'h':
            cur = {'title': t, 'anchor': anchor, 'parts': []}
            sections.append(cur)
            continue
        if cur is None:
            cur = {'title': PAGE.get(path, path), 'anchor': None, 'parts': []}
            sections.append(cur)
        cur['parts'].append(t)
    out = []
    for s in sections:
        text = '\n\n'.join(s['parts']).strip()
        if len(text.split()) < 15:
            continue
        out.append((s['title'], s['anchor'], text))
    return out

PAGE = {'docs/api.html': '2. APIs', 'docs/configuration.html': '3. Configuration', 'docs/design.html': '4. Design',
        'docs/implementation.html': '5. Implementation', 'docs/ops.html': '6. Operations',
        'docs/security.html': '7. Security', 'docs/connect.html': '8. Kafka Connect'}
files = pages(G, ('docs/toc.html', 'docs/documentation.html'))
doc_id, seen = 0, set()
with open(sys.argv[2], 'w') as o:
    for f in files:
        secs = convert(f)
        for title, anchor, text in secs:
            key = f + '#' + (anchor or re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-'))
            k, n = key, 2
            while k in seen:
                k = f'{key}-{n}'; n += 1
            seen.add(k)
            o.write(json.dumps({'doc_id': doc_id, 'title': title, 'text': text, 'doc': k}, ensure_ascii=False) + '\n')
            doc_id += 1
        print(f, len(secs), file=sys.stderr)
print(doc_id, file=sys.stderr)
