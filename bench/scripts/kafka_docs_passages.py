"""Convert Apache Kafka's docs/ HTML (at HEAD of a clone of apache/kafka) to the plain-text passages that
bench/data/er-passages.jsonl holds for the kafka-docs pairs.

Usage: kafka_docs_passages.py KAFKA_GIT_DIR OUT.jsonl
"""
import json, re, sys
from html.parser import HTMLParser
from kafka_docs_pages import page_html, pages

G = sys.argv[1]

BLOCK = {'p', 'div', 'ul', 'ol', 'li', 'table', 'tr', 'td', 'th', 'thead', 'tbody', 'dl', 'dt', 'dd',
         'blockquote', 'section', 'br', 'hr', 'img', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre'}
HEAD = {'h1', 'h2', 'h3', 'h4', 'h5', 'h6'}
DROP = {'script', 'style', 'pre'}   # code listings are not prose

class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items = []     # ('h', text) or ('t', text)
        self.buf = []
        self.drop = 0
        self.inhead = None
    def flush(self):
        t = re.sub(r'\s+', ' ', ''.join(self.buf)).strip()
        self.buf = []
        if t:
            self.items.append(('h' if self.inhead else 't', t))
    def handle_starttag(self, tag, attrs):
        if tag in DROP:
            self.flush(); self.drop += 1; return
        if self.drop: return
        if tag in BLOCK:
            self.flush()
            if tag in HEAD: self.inhead = tag
    def handle_endtag(self, tag):
        if tag in DROP:
            self.drop = max(0, self.drop - 1); return
        if self.drop: return
        if tag in BLOCK:
            self.flush()
            if tag in HEAD: self.inhead = None
    def handle_data(self, d):
        if not self.drop: self.buf.append(d)
    def close(self):
        super().close(); self.flush()

def words(t): return len(t.split())

def split_long(t, maxw=250):
    sents = re.split(r'(?<=[.!?])\s+(?=[A-Z`(])', t)
    out, cur = [], []
    for s in sents:
        if cur and words(' '.join(cur + [s])) > maxw:
            out.append(' '.join(cur)); cur = []
        cur.append(s)
    if cur: out.append(' '.join(cur))
    return out

def convert(path):
    html = page_html(G, path)
    p = P(); p.feed(html); p.close()
    page_title = PAGE.get(path)
    heading = None
    paras = []  # (heading, text)
    for kind, t in p.items:
        if kind == 'h':
            heading = t
            if page_title is None: page_title = t
            continue
        if '{{' in t or '}}' in t:   # template variables: not prose
            continue
        paras.append((heading, t))
    # merge short paragraphs with the next one of the same section, split long ones
    out, pend = [], None
    for h, t in paras:
        if pend and pend[0] == h:
            t = pend[1] + ' ' + t
        elif pend and words(pend[1]) >= 20:
            out.append(pend)
        pend = None
        if words(t) < 20:
            pend = (h, t); continue
        for c in split_long(t):
            out.append((h, c))
    if pend and words(pend[1]) >= 20: out.append(pend)
    return page_title, [(h, t) for h, t in out if 20 <= words(t) <= 250]

PAGE = {'docs/introduction.html': '1. Getting Started', 'docs/uses.html': '1. Getting Started',
        'docs/quickstart.html': '1. Getting Started', 'docs/ecosystem.html': '1. Getting Started',
        'docs/upgrade.html': '1. Getting Started', 'docs/docker.html': '1. Getting Started',
        'docs/api.html': '2. APIs', 'docs/configuration.html': '3. Configuration', 'docs/design.html': '4. Design',
        'docs/implementation.html': '5. Implementation', 'docs/ops.html': '6. Operations',
        'docs/security.html': '7. Security', 'docs/connect.html': '8. Kafka Connect'}
files = pages(G)
doc_id = 0
with open(sys.argv[2], 'w') as o:
    for f in files:
        title, ps = convert(f)
        for n, (h, t) in enumerate(ps):
            o.write(json.dumps({'dataset': 'kafka-docs', 'doc_id': doc_id, 'title': h or title or f,
                                'text': t, 'source_id': f'{f}#{n}'}, ensure_ascii=False) + '\n')
            doc_id += 1
        print(f, len(ps), file=sys.stderr)
print(doc_id, file=sys.stderr)
