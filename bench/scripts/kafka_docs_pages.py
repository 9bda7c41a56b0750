"""What the two Kafka-docs converters share: reading a page of apache/kafka's docs/ from a clone, as HTML."""
import re, subprocess


def git(git_dir, *args):
    return subprocess.run(['git', '--git-dir=' + git_dir, *args], capture_output=True, text=True, check=True).stdout


def page_html(git_dir, path):
    """The page at HEAD, without comments, its handlebars template (inside <script type="text/x-handlebars-template">,
    which html.parser would take for a script) read as HTML."""
    html = git(git_dir, 'show', 'HEAD:' + path)
    html = re.sub(r'<!--.*?-->', ' ', html, flags=re.S)
    html = re.sub(r'<script[^>]*type="text/x-handlebars-template"[^>]*>', '<div>', html)
    return re.sub(r'</script>\s*<div class="p-(?:[a-z-]+)"></div>', '</div>', html)


def pages(git_dir, leave_out=('docs/toc.html',)):
    """The docs/ pages, in path order, but the include stubs of docs/documentation/ and those left out."""
    return sorted(f for f in git(git_dir, 'ls-tree', '-r', 'HEAD', '--name-only').split('\n')
                  if f.startswith('docs/') and f.endswith('.html') and not f.startswith('docs/documentation/')
                  and f not in leave_out)
