import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Bash, InMemoryFs, type BashOptions } from 'just-bash/browser';
import { describe, expect, it } from 'vitest';
import { jqCommand, type JqWeb } from '$lib/adapters/sandbox/engines/jq';

const require = createRequire(import.meta.url);

// jq-web as the worker gets it: the text of jq.js and jq.wasm, compiled once.
const load = async (): Promise<JqWeb> => ({
  script: readFileSync(require.resolve('jq-web'), 'utf8'),
  wasm: await WebAssembly.compile(readFileSync(require.resolve('jq-web/jq.wasm'))),
});
const jq = jqCommand(load);

function shell(files: Record<string, string> = {}, executionLimits?: BashOptions['executionLimits']) {
  const bash = new Bash({ fs: new InMemoryFs(files), cwd: '/', customCommands: [jq], executionLimits });
  return (script: string) => bash.exec(script);
}

const ok = (stdout: string) => ({ stdout, stderr: '', exitCode: 0 });

describe('jq (real jq 1.7 from jq-web)', () => {
  it('encodes and decodes @base64 as UTF-8', async () => {
    const run = shell();
    expect(await run(`echo '"héllo ✓"' | jq -r '@base64, (@base64 | @base64d)'`)).toMatchObject(
      ok('aMOpbGxvIOKckw==\nhéllo ✓\n'),
    );
  });

  it('formats @csv, @tsv, @sh and @uri', async () => {
    const run = shell({ '/row.json': JSON.stringify([1, 'a,b', "it's", 't\tab']) });
    expect(await run(`jq -r '@csv, @tsv, @sh' row.json`)).toMatchObject(
      ok(`1,"a,b","it's","t\tab"\n1\ta,b\tit's\tt\\tab\n1 'a,b' 'it'\\''s' 't\tab'\n`),
    );
    expect(await run(`jq -rn '"a b&c/é" | @uri'`)).toMatchObject(ok('a%20b%26c%2F%C3%A9\n'));
  });

  it('reads further inputs with input and inputs', async () => {
    const run = shell();
    expect(await run(`echo 1 2 3 4 | jq -c '[., input]'`)).toMatchObject(ok('[1,2]\n[3,4]\n'));
    expect(await run(`printf '1\\n2\\n3' | jq -nc '[inputs]'`)).toMatchObject(ok('[1,2,3]\n'));
  });

  // jq's manual shows "<stdin>"; jq 1.6 and 1.7 both name the program "<top-level>".
  it('gives $__loc__ as the program line', async () => {
    const run = shell();
    expect(await run(`jq -nc '$__loc__'`)).toMatchObject(ok('{"file":"<top-level>","line":1}\n'));
    expect(await run(`jq -nc '1 |\n$__loc__'`)).toMatchObject(ok('{"file":"<top-level>","line":2}\n'));
  });

  it('binds --arg, --argjson, --args and --jsonargs', async () => {
    const run = shell();
    expect(await run(`jq -nc --arg a x --argjson b '{"k":[1]}' '[$a, $b, $ARGS.named]'`)).toMatchObject(
      ok('["x",{"k":[1]},{"a":"x","b":{"k":[1]}}]\n'),
    );
    expect(await run(`jq -nc '$ARGS.positional' --args a b`)).toMatchObject(ok('["a","b"]\n'));
    expect(await run(`jq -nc '$ARGS.positional' --jsonargs 1 '{"x":2}'`)).toMatchObject(ok('[1,{"x":2}]\n'));
  });

  it('formats output: pretty by default, -c, -S, --tab, --indent, -r, -j', async () => {
    const run = shell({ '/o.json': '{"b":[1,"x"],"a":"é"}' });
    expect(await run('jq . o.json')).toMatchObject(ok('{\n  "b": [\n    1,\n    "x"\n  ],\n  "a": "é"\n}\n'));
    expect(await run('jq -c -S . o.json')).toMatchObject(ok('{"a":"é","b":[1,"x"]}\n'));
    expect(await run('jq --tab .b o.json')).toMatchObject(ok('[\n\t1,\n\t"x"\n]\n'));
    expect(await run('jq --indent 1 .b o.json')).toMatchObject(ok('[\n 1,\n "x"\n]\n'));
    expect(await run(`jq -r '.b[], .a' o.json`)).toMatchObject(ok('1\nx\né\n'));
    expect(await run(`jq -j '.b[]' o.json`)).toMatchObject(ok('1x'));
  });

  it('reads input with -s, -n and -R', async () => {
    const run = shell();
    expect(await run('echo 1 2 3 | jq -sc .')).toMatchObject(ok('[1,2,3]\n'));
    expect(await run(`jq -n '1 + 1'`)).toMatchObject(ok('2\n'));
    expect(await run(`printf 'x\\ny' | jq -R .`)).toMatchObject(ok('"x"\n"y"\n'));
    expect(await run(`printf 'x\\ny\\n' | jq -Rs .`)).toMatchObject(ok('"x\\ny\\n"\n'));
  });

  it('sets the -e exit status from the last output, and keeps that output', async () => {
    const run = shell();
    expect(await run('echo false | jq -e .')).toMatchObject({ stdout: 'false\n', exitCode: 1 });
    expect(await run(`echo '{"a":null}' | jq -e .a`)).toMatchObject({ stdout: 'null\n', exitCode: 1 });
    expect(await run('echo 1 | jq -e .')).toMatchObject(ok('1\n'));
    expect(await run('jq -ne empty')).toMatchObject({ stdout: '', exitCode: 4 });
  });

  it('fails to compile with exit 3 and jq’s message', async () => {
    expect(await shell()(`jq -n '.a | |'`)).toMatchObject({
      stdout: '',
      stderr:
        "jq: error: syntax error, unexpected '|' (Unix shell quoting issues?) at <top-level>, line 1:\n" +
        '.a | |     \njq: 1 compile error\n',
      exitCode: 3,
    });
  });

  it('reports a runtime error with exit 5, after the output before it', async () => {
    const run = shell({ '/s.json': '{"a":"x"}' });
    expect(await run(`echo '[1,"a",3]' | jq '.[] | . + 1'`)).toMatchObject({
      stdout: '2\n',
      stderr: 'jq: error (at <stdin>:1): string ("a") and number (1) cannot be added\n',
      exitCode: 5,
    });
    expect(await run(`jq '.a + 1' /s.json`)).toMatchObject({
      stderr: 'jq: error (at /s.json:0): string ("x") and number (1) cannot be added\n',
      exitCode: 5,
    });
    expect(await run(`jq -n '"bye\\n" | halt_error(3)'`)).toMatchObject({
      stdout: '',
      stderr: 'bye\n',
      exitCode: 3,
    });
  });

  it('reads files named relative to the working directory, in order', async () => {
    const run = shell({ '/d/a.json': '{"a":1}', '/b.json': '[2]\n' });
    expect(await run('cd /d && jq -c . a.json /b.json')).toMatchObject(ok('{"a":1}\n[2]\n'));
    expect(await run(`cd /d && jq -c '[., input_filename]' a.json ../b.json`)).toMatchObject(
      ok('[{"a":1},"a.json"]\n[[2],"../b.json"]\n'),
    );
    expect(await run('jq -c . nope.json b.json')).toMatchObject({
      stdout: '[2]\n',
      stderr: 'jq: error: Could not open file nope.json: No such file or directory\n',
      exitCode: 2,
    });
  });

  it('reads --slurpfile, --rawfile and -f files from the shell’s filesystem', async () => {
    const run = shell({ '/b.json': '1 [2]', '/t.txt': 'x\ny\n', '/p.jq': '.a', '/a.json': '{"a":1}' });
    expect(await run(`jq -nc --slurpfile s b.json --rawfile r t.txt '[$s, $r]'`)).toMatchObject(
      ok('[[1,[2]],"x\\ny\\n"]\n'),
    );
    expect(await run('jq -f p.jq a.json')).toMatchObject(ok('1\n'));
    expect(await run(`jq -n --slurpfile s nope.json '$s'`)).toMatchObject({
      stderr:
        'jq: Bad JSON in --slurpfile s nope.json: Could not open nope.json: No such file or directory\n',
      exitCode: 2,
    });
  });

  it('sees the exported environment as env and $ENV', async () => {
    expect(await shell()(`export A=1; B=2; C=3 jq -nc '[env.A, env.B, env.C, $ENV.A]'`)).toMatchObject(
      ok('["1",null,"3","1"]\n'),
    );
  });

  it('works in a pipeline, and defaults to . without a filter (stdin is not a terminal)', async () => {
    const run = shell({ '/data.json': '[{"a":"c"},{"a":"a"},{"a":"b"}]' });
    expect(await run(`cat data.json | jq '.[] | .a' | sort`)).toMatchObject(ok('"a"\n"b"\n"c"\n'));
    expect(await run(`echo '{"a":1}' | jq`)).toMatchObject(ok('{\n  "a": 1\n}\n'));
  });

  it('prints help on stdout and rejects unknown options with exit 2', async () => {
    const run = shell();
    const help = await run('jq --help');
    expect(help).toMatchObject({ stderr: '', exitCode: 0 });
    expect(help.stdout).toContain('Usage:\tjq [options] <jq filter> [file...]\n');
    expect(await run('jq --frobnicate .')).toMatchObject({
      stdout: '',
      stderr: expect.stringMatching(/^jq: Unknown option --frobnicate\n/),
      exitCode: 2,
    });
  });

  it('takes a 1 MB array from a file and from stdin', async () => {
    const items = Array.from({ length: 40_000 }, (_, i) => ({ a: i, b: 'padding' }));
    const json = JSON.stringify(items);
    expect(json.length).toBeGreaterThan(1_000_000);
    const run = shell({ '/big.json': json });
    expect(await run(`jq '.[] | .a' big.json | wc -l`)).toMatchObject(ok('40000\n'));
    expect(await run(`cat big.json | jq '.[] | .a'`)).toMatchObject(
      ok(items.map((x) => `${x.a}\n`).join('')),
    );
  });

  it('starts each call fresh: a failed call does not leak into the next', async () => {
    const run = shell();
    expect(await run(`echo '[1,"a"]' | jq '.[] | . + 1'; echo '{"b":2}' | jq -c .`)).toMatchObject({
      stdout: '2\n{"b":2}\n',
      exitCode: 0,
    });
    expect(await run(`jq -n '.a | |'; jq -r -n '"ok"'`)).toMatchObject({ stdout: 'ok\n', exitCode: 0 });
    expect(await run(`jq -n 1`)).toMatchObject(ok('1\n'));
  });

  it('stops runaway output at the shell’s output limit', async () => {
    const run = shell({}, { maxOutputSize: 10_000 });
    // repeat(1) never ends: jq stops itself at the limit, and the shell reports the overflow.
    expect(await run(`jq -n 'repeat(1)'`)).toMatchObject({
      exitCode: 126,
      stderr: expect.stringContaining('output size exceeded (>10000 bytes)'),
    });
    expect(await run('jq -n 1')).toMatchObject(ok('1\n'));
  });

  it('stops at the shell’s memory limit', async () => {
    const run = shell({}, { maxLiveBytes: 64 * 1024 * 1024 });
    expect(await run(`jq -n '[range(1e8)] | length'`)).toMatchObject({
      stdout: '',
      stderr: expect.stringContaining('jq: error: cannot allocate memory\n'),
      exitCode: 134,
    });
    expect(await run('jq -n 1')).toMatchObject(ok('1\n'));
  });
});
