"""The script graph_html adds to a pyvis page: fit the drawing to its frame, keep labels readable at any zoom,
and leave out a label (a node's, then an edge's) that would overlap a better-ranked one."""

# Fit the drawing to its frame once laid out, and whenever the frame is resized or first shown (a graph drawn
# inside a hidden tab starts with zero width); then keep labels readable: vis-network scales label text with the
# zoom and skips it under 5 px, so a big graph fitted far out showed no labels; below zoom 1 each label's font is
# enlarged by 1/zoom (its base size kept in __font) so it stays at its set size on screen.
FIT_SCRIPT = """<script type="text/javascript">
(function () {
  function readable() {
    if (!window.network || typeof nodes === "undefined" || typeof edges === "undefined") { return; }
    var k = Math.max(1, 1 / window.network.getScale());
    [nodes, edges].forEach(function (set) {
      set.update(set.get().map(function (x) {
        var base = x.__font || (x.font && x.font.size) || 14;
        return {id: x.id, __font: base, font: Object.assign({}, x.font || {}, {size: base * k})};
      }));
    });
  }
  // labels never overlap: in rank order (roles, then the best-connected) a label whose box meets a label already
  // kept is left out (its text stays on hover); recomputed after every fit and zoom
  function declutter() {
    if (!window.network || typeof nodes === "undefined") { return; }
    var all = nodes.get();
    all.forEach(function (n) { if (n.__label === undefined) { n.__label = n.label; } });
    var named = all.filter(function (n) { return n.__label && n.__label.trim(); })
      .sort(function (a, b) { return (a.__rank || 0) - (b.__rank || 0); });
    nodes.update(named.map(function (n) { return {id: n.id, __label: n.__label, label: n.__label}; }));
    var kept = [], hide = [], pos = window.network.getPositions(named.map(function (n) { return n.id; }));
    var ctx = document.createElement("canvas").getContext("2d");
    named.forEach(function (n) {  // the label's box in canvas units, placed as vis-network places it: under a dot,
      // diamond or triangle (top at y + radius + size/2 + 4), centred inside a box; its width measured in its font
      var size = (n.font && n.font.size) || 14, p = pos[n.id];
      ctx.font = size + "px " + ((n.font && n.font.face) || "arial");
      var w = ctx.measureText(n.__label).width + 2;
      var top = n.shape === "box" ? p.y - size * 0.7 : p.y + (n.size || 11) + size / 2 + 4;
      var b = {left: p.x - w / 2, right: p.x + w / 2, top: top, bottom: top + size * 1.3};
      var meets = kept.some(function (k) {
        return b.left < k.right && k.left < b.right && b.top < k.bottom && k.top < b.bottom; });
      if (meets) { hide.push({id: n.id, label: " "}); } else { kept.push(b); }
    });
    nodes.update(hide);
    // edge labels after every node label, those of the focus / seed nodes first, then in id order: drawn horizontally at the edge's middle, left out where
    // they would meet a label already kept (the relation stays on hover)
    var ehide = [], eshow = [];
    if (typeof edges !== "undefined") {
      var es = edges.get();
      es.forEach(function (e) { if (e.__label === undefined) { e.__label = e.label || ""; } });
      var ep = window.network.getPositions();
      var bodies = all.filter(function (n) { return ep[n.id]; }).map(function (n) {
        var r = n.size || 11, q = ep[n.id];
        return {left: q.x - r, right: q.x + r, top: q.y - r, bottom: q.y + r}; });
      es.filter(function (e) { return e.__label && e.__label.trim() && ep[e.from] && ep[e.to]; })
        .sort(function (a, b) { return ((a.__rank || 0) - (b.__rank || 0)) || (String(a.id) < String(b.id) ? -1 : 1); })
        .forEach(function (e) {
          var size = (e.font && e.font.size) || 12, a = ep[e.from], c = ep[e.to];
          ctx.font = size + "px arial";
          var w = ctx.measureText(e.__label).width + 2, x = (a.x + c.x) / 2, y = (a.y + c.y) / 2;
          var b = {left: x - w / 2, right: x + w / 2, top: y - size * 0.65, bottom: y + size * 0.65};
          var meets = kept.concat(bodies).some(function (k) {
            return b.left < k.right && k.left < b.right && b.top < k.bottom && k.top < b.bottom; });
          if (meets) { ehide.push({id: e.id, __label: e.__label, label: " "}); }
          else { kept.push(b); eshow.push({id: e.id, __label: e.__label, label: e.__label}); }
        });
      edges.update(eshow.concat(ehide));
    }
    window.__memcoreHidden = hide.length;
    window.__memcoreEdgeHidden = ehide.length;
    window.__memcoreEdgeShown = eshow.length;
  }
  function fit() {
    if (window.network) {
      window.network.fit({animation: false});
      window.network.moveTo({scale: window.network.getScale() * 0.9});  // a margin: no label cut at the frame
      readable(); declutter(); window.__memcoreFitted = true;
    }
  }
  // the simulation goes on after the first layout (and after a drag): once it stops, labels are decluttered at the
  // nodes' final places (if any node moved since the last declutter: a declutter restarts the simulation, which
  // then stops at once) and __memcoreSettled is set
  var placed = null;
  function moved(now) {
    if (!placed) { return true; }
    return Object.keys(now).some(function (id) {
      var a = now[id], b = placed[id];
      return !b || Math.abs(a.x - b.x) > 1 || Math.abs(a.y - b.y) > 1; });
  }
  function settled() {
    var now = window.network.getPositions();
    if (moved(now)) {
      if (placed) { readable(); declutter(); } else { fit(); }
      placed = window.network.getPositions();
    }
    window.__memcoreSettled = true;
  }
  if (window.network) {
    window.network.once("stabilizationIterationsDone", fit);
    window.network.on("stabilized", settled);
    window.network.on("zoom", function () { readable(); declutter(); });
  }
  var box = document.getElementById("mynetwork");
  if (box && window.ResizeObserver) { new ResizeObserver(fit).observe(box); }
  setTimeout(fit, 400); setTimeout(fit, 1500);
})();
</script>
"""
