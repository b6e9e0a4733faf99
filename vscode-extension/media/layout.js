// The script of the layout webview (src/layoutPanel.ts). It builds the page from the extension's
// messages with DOM calls only (no innerHTML), since titles and text come from the document.
// @ts-check
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  // The page's nonce: the inlined SVG's <style> needs it to pass the Content-Security-Policy.
  const nonce = /** @type {HTMLScriptElement} */ (document.currentScript)?.nonce ?? '';

  /** @param {string} id */
  function element(id) {
    const found = document.getElementById(id);
    if (!found) {
      throw new Error('missing element ' + id);
    }
    return found;
  }

  const title = element('title');
  const location = element('location');
  const follow = /** @type {HTMLInputElement} */ (element('follow'));
  const controls = /** @type {HTMLFormElement} */ (element('controls'));
  const dims = element('dims');
  const index = /** @type {HTMLInputElement} */ (element('index'));
  const message = element('message');
  const picture = element('picture');
  const hover = element('hover');
  const textDetails = element('textDetails');
  const text = element('text');
  const dataDetails = element('dataDetails');
  const data = element('data');

  /** @type {Record<string, HTMLInputElement>} */
  let extentInputs = {};
  /** The layout data of the picture shown (compiler.layout's layout_data). */
  /** @type {any} */
  let layout = null;
  const HOVER_HINT = 'Hover over a tile for its index and elements.';

  /**
   * The server's SVG as live DOM (an <img> shows no tooltips and cannot be hovered), parsed as
   * XML and stripped of anything active: scripts, foreign HTML, event handlers and links.
   * @param {string} source
   */
  function inlineSvg(source) {
    const parsed = new DOMParser().parseFromString(source, 'image/svg+xml');
    const root = parsed.documentElement;
    if (root.nodeName !== 'svg' || parsed.getElementsByTagName('parsererror').length > 0) {
      return null;
    }
    for (const bad of Array.from(root.querySelectorAll('script, foreignObject, a, iframe, image, use'))) {
      bad.remove();
    }
    for (const node of Array.from(root.querySelectorAll('*')).concat([root])) {
      for (const attribute of Array.from(node.attributes)) {
        const name = attribute.name.toLowerCase();
        if (name.startsWith('on') || name === 'href' || name.endsWith(':href')) {
          node.removeAttribute(attribute.name);
        }
      }
    }
    for (const style of Array.from(root.querySelectorAll('style'))) {
      style.setAttribute('nonce', nonce);
    }
    return /** @type {SVGSVGElement} */ (document.importNode(root, true));
  }

  /** @param {number[]} index */
  function label(index) {
    return '(' + index.join(', ') + ')';
  }

  /**
   * What the pointer is over: the tile's index (the <title> the server gives each tile), its
   * elements (from the layout data: the first tiles listed, else start = index * step along the
   * mapped tensor dim) and the element under the pointer inside it.
   * @param {MouseEvent} event
   */
  function describeHover(event) {
    const target = /** @type {Element} */ (event.target);
    if (!(target instanceof SVGRectElement) || !target.classList.contains('tile') || !layout) {
      return null;
    }
    const titleText = target.querySelector('title')?.textContent ?? '';
    const index = titleText.replace(/[()\s]/g, '').split(',').filter((p) => p !== '').map(Number);
    if (index.length === 0 || index.some((n) => !Number.isInteger(n))) {
      return null;
    }
    const rank = layout.tensor_shape.length;
    /** @type {number[][]} [start, end) per tensor dim */
    let ranges = [];
    const listed = (layout.tiles || []).find(
      (/** @type {{index: number[]}} */ t) => t.index.length === index.length && t.index.every((v, k) => v === index[k]),
    );
    if (listed) {
      ranges = listed.requested;
    } else if (layout.kind === 'gather_scatter_view') {
      return 'tile ' + label(index);
    } else {
      ranges = Array.from({ length: rank }, () => [0, 1]);
      index.forEach((value, i) => {
        const d = layout.dim_map[i];
        const start = value * layout.steps[i];
        const size = layout.kind === 'tensor_view' ? 1 : layout.tile_shape[i];
        ranges[d] = [start, start + size];
      });
    }
    // The picture's axes: the last tensor dim across, the one before it down (compiler.layout).
    const box = target.getBoundingClientRect();
    const colDim = rank - 1;
    const rowDim = rank >= 2 ? rank - 2 : -1;
    const element = ranges.map((r) => r[0]);
    /** @param {number} d @param {number} fraction */
    const along = (d, fraction) => {
      const [start, end] = ranges[d];
      element[d] = Math.min(end - 1, start + Math.floor(Math.max(0, fraction) * (end - start)));
    };
    if (colDim >= 0 && box.width > 0) {
      along(colDim, (event.clientX - box.left) / box.width);
    }
    if (rowDim >= 0 && box.height > 0) {
      along(rowDim, (event.clientY - box.top) / box.height);
    }
    const span = ranges.map((r) => (r[1] - r[0] === 1 ? String(r[0]) : r[0] + '..' + (r[1] - 1))).join(', ');
    return 'tile ' + label(index) + ': elements [' + span + '], element ' + label(element);
  }

  picture.addEventListener('mousemove', (event) => {
    const text = describeHover(event);
    hover.textContent = text ?? HOVER_HINT;
    hover.dataset.active = text ? 'true' : 'false';
  });
  picture.addEventListener('mouseleave', () => {
    hover.textContent = HOVER_HINT;
    hover.dataset.active = 'false';
  });

  /** @param {string[]} names @param {Record<string, number>} extents */
  function showDims(names, extents) {
    // Keep what the user is typing when the same dimensions come back.
    const same = names.length === Object.keys(extentInputs).length && names.every((n) => n in extentInputs);
    if (same) {
      return;
    }
    dims.replaceChildren();
    extentInputs = {};
    for (const name of names) {
      const label = document.createElement('label');
      label.title = 'Extent of the dynamic dimension ' + name;
      label.append(name + ' =');
      const input = document.createElement('input');
      input.type = 'number';
      input.min = '0';
      input.step = '1';
      input.placeholder = '?';
      if (extents[name] !== undefined) {
        input.value = String(extents[name]);
      }
      label.append(input);
      dims.append(label);
      extentInputs[name] = input;
    }
  }

  controls.addEventListener('submit', (event) => {
    event.preventDefault();
    /** @type {Record<string, string>} */
    const extents = {};
    for (const [name, input] of Object.entries(extentInputs)) {
      extents[name] = input.value.trim();
    }
    vscode.postMessage({ type: 'apply', extents, index: index.value });
  });

  follow.addEventListener('change', () => {
    vscode.postMessage({ type: 'follow', value: follow.checked });
  });

  window.addEventListener('message', (event) => {
    const msg = event.data;
    follow.checked = Boolean(msg.follow);
    if (msg.type === 'empty') {
      message.textContent = msg.message;
      message.hidden = false;
      picture.hidden = true;
      hover.hidden = true;
      controls.hidden = true;
      textDetails.hidden = true;
      dataDetails.hidden = true;
      return;
    }
    if (msg.type !== 'layout') {
      return;
    }
    title.textContent = msg.title;
    location.textContent = msg.location;
    const drawing = inlineSvg(msg.svg);
    if (!drawing) {
      message.textContent = 'The server sent a picture that is not SVG.';
      message.hidden = false;
      picture.hidden = true;
      return;
    }
    message.hidden = true;
    layout = msg.layout;
    picture.replaceChildren(drawing);
    hover.textContent = HOVER_HINT;
    hover.dataset.active = 'false';
    hover.hidden = false;
    picture.hidden = false;
    showDims(msg.dynamicDims, msg.extents);
    if (document.activeElement !== index) {
      index.value = msg.index ? msg.index.join(', ') : '';
    }
    controls.hidden = false;
    text.textContent = msg.text;
    textDetails.hidden = !msg.text;
    data.textContent = msg.data;
    dataDetails.hidden = false;
  });

  vscode.postMessage({ type: 'ready' });
})();
