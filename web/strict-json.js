// strict-json.js: JSON as strictly as the core reads it (core/json_io.cpp parse_strict), for the text
// the page itself parses (the pasted config.json, the URL's hf parameter): JSON.parse takes a key named
// twice as last-wins and has no depth limit, so this scan runs first and refuses a duplicate key (with
// its JSON-pointer path) and nesting deeper than 64 levels. Iterative (no recursion): any input, any
// depth, one pass. The syntax itself is left to JSON.parse, which runs after it.
(function (CL) {
  'use strict';
  const MAX_DEPTH = 64;
  const ptr = (path) => '/' + path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

  // null when the text keeps both rules (or is not JSON at all: JSON.parse says why), else
  // { message, path }.
  function check(text) {
    const stack = [];  // per open container: { keys: Set | null (array), key: pending key, index }
    const path = [];
    let i = 0;
    const n = text.length;
    while (i < n) {
      const c = text[i];
      if (c === '"') {
        let j = i + 1;
        while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
        const top = stack[stack.length - 1];
        // a key: a string in an object where a key is expected (the next non-space is ':')
        let k = j + 1;
        while (k < n && /\s/.test(text[k])) k++;
        if (top && top.keys && text[k] === ':') {
          let key;
          try { key = JSON.parse(text.slice(i, j + 1)); } catch (e) { return null; }
          if (top.keys.has(key)) return { message: 'the key "' + key + '" appears twice in one object', path: ptr(path.concat([key])) };
          top.keys.add(key);
          top.key = key;
        }
        i = j + 1;
        continue;
      }
      if (c === '{' || c === '[') {
        const top = stack[stack.length - 1];
        if (top) path.push(top.keys ? top.key : top.index);
        if (stack.length >= MAX_DEPTH) return { message: 'nested deeper than ' + MAX_DEPTH + ' levels', path: ptr(path) };
        stack.push({ keys: c === '{' ? new Set() : null, key: null, index: 0 });
      } else if (c === '}' || c === ']') {
        stack.pop();
        if (stack.length) path.pop();
      } else if (c === ',') {
        const top = stack[stack.length - 1];
        if (top && !top.keys) top.index++;
      }
      i++;
    }
    return null;
  }

  // The value of `text`, or { error: { message, path } } (path '' for a syntax error, as JSON.parse
  // reports it).
  function parse(text) {
    const broken = check(text);
    if (broken) return { error: broken };
    try {
      return { value: JSON.parse(text) };
    } catch (e) {
      return { error: { message: e.message, path: '' } };
    }
  }

  CL.strictJson = { check, parse, MAX_DEPTH };
})(window.CL = window.CL || {});
