// The dashboard's only script. Every page works without it; with it, the
// app switcher follows the selection, copy buttons copy, the section nav
// folds behind a button on phones, and the content preview follows the
// editor as you type. Text is only ever set through
// textContent and attributes, never parsed as HTML.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  document.addEventListener("change", function (e) {
    var el = e.target;
    if (el.matches && el.matches("select[data-autosubmit]") && el.form) {
      el.form.submit();
    }
  });

  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest("[data-copy]");
    if (!btn) return;
    var src = document.getElementById(btn.getAttribute("data-copy"));
    if (!src) return;
    // A field (a new key) or a block of code (a snippet): either way the
    // text ends up selected, for the fallback and for the eye.
    var text;
    if ("value" in src && src.select) {
      src.select();
      text = src.value;
    } else {
      var range = document.createRange();
      range.selectNodeContents(src);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      text = src.textContent;
    }
    var done = function () {
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = "Copy"; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { document.execCommand("copy"); done(); });
    } else {
      document.execCommand("copy");
      done();
    }
  });

  // The section nav's button (shown on phones) opens and folds the nav;
  // Escape folds it again and gives the focus back to the button.
  function setNav(nav, open) {
    nav.classList.toggle("open", open);
    nav.querySelector(".nav-toggle").setAttribute("aria-expanded", String(open));
  }
  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest(".nav-toggle");
    if (btn) setNav(btn.closest("nav"), btn.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    var nav = document.querySelector("nav.side.open");
    if (!nav || !nav.contains(document.activeElement)) return;
    setNav(nav, false);
    nav.querySelector(".nav-toggle").focus();
  });

  var editor = document.getElementById("editor");
  var preview = document.getElementById("preview");
  if (!editor || !preview) return;

  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function val(scope, key) {
    var n = scope.querySelector("[data-k='" + key + "']");
    return n ? n.value : "";
  }
  // Only links an app would follow: http(s) or a path, as the API allows.
  function safeURL(u) {
    return /^(https?:\/\/|\/)/i.test(u) ? u : "#";
  }
  // The preview applies only these style properties, each with values of
  // its kind: a block's styles come from whoever edits it, and the preview
  // runs inside the dashboard, so nothing may place the block outside its
  // box, fetch anything (url(), image-set()) or size it by the viewport.
  // docs/dashboard.md lists them.
  var length = /^(0|-?(\d+|\d*\.\d+)(px|%|em|rem)|auto)$/;
  var number = /^(\d+|\d*\.\d+)$/;
  var colour = /^(#[0-9a-f]{3,8}|[a-z]+|(rgba?|hsla?)\([0-9.,%\s\/]+\))$/i;
  var keyword = /^[a-z-]+$/i;
  var kinds = {
    length: function (v) { return length.test(v); },
    lengths: function (v) { return v.split(/\s+/).length <= 4 && v.split(/\s+/).every(kinds.length); },
    lineHeight: function (v) { return number.test(v) || length.test(v) || v === "normal"; },
    weight: function (v) { return /^(normal|bold|bolder|lighter|[1-9]00)$/.test(v); },
    colour: function (v) { return colour.test(v); },
    keyword: function (v) { return keyword.test(v); },
    keywords: function (v) { return v.split(/\s+/).every(kinds.keyword); },
    font: function (v) { return /^[a-z0-9\s,'"-]+$/i.test(v); },
    border: function (v) {
      var parts = v.split(/\s+/);
      return parts.length <= 3 && parts.every(function (p) { return length.test(p) || keyword.test(p) || colour.test(p); });
    },
    position: function (v) { return v === "static" || v === "relative"; },
    opacity: function (v) { return number.test(v); }
  };
  var allowedStyles = {
    color: "colour", backgroundColor: "colour", opacity: "opacity",
    fontFamily: "font", fontSize: "length", fontStyle: "keyword", fontWeight: "weight",
    lineHeight: "lineHeight", letterSpacing: "length", wordSpacing: "length",
    textAlign: "keyword", textDecoration: "keywords", textTransform: "keyword", whiteSpace: "keyword",
    verticalAlign: "keyword", alignSelf: "keyword", display: "keyword",
    margin: "lengths", marginTop: "length", marginRight: "length", marginBottom: "length", marginLeft: "length",
    padding: "lengths", paddingTop: "length", paddingRight: "length", paddingBottom: "length", paddingLeft: "length",
    border: "border", borderTop: "border", borderRight: "border", borderBottom: "border", borderLeft: "border",
    borderWidth: "lengths", borderStyle: "keywords", borderColor: "colour", borderRadius: "lengths",
    width: "length", height: "length", minWidth: "length", maxWidth: "length", minHeight: "length", maxHeight: "length",
    position: "position"
  };
  // A number is a length in px, as apps read it, except where it has no unit.
  var unitless = { fontWeight: true, lineHeight: true, opacity: true };

  function applyStyles(node, item) {
    var input = item.querySelector("input[name$='.styles']");
    if (!input || !input.value.trim()) return;
    var st;
    try { st = JSON.parse(input.value); } catch (_) { return; /* shown as a field error on save */ }
    if (!st || typeof st !== "object") return;
    Object.keys(st).forEach(function (k) {
      var kind = Object.prototype.hasOwnProperty.call(allowedStyles, k) && allowedStyles[k];
      var v = st[k];
      if (!kind || (typeof v !== "string" && typeof v !== "number")) return;
      v = typeof v === "number" && !unitless[k] ? v + "px" : String(v).trim();
      if (/url\s*\(|image-set|expression|[\\;{}<>]/i.test(v) || !kinds[kind](v)) return;
      node.style.setProperty(k.replace(/[A-Z]/g, function (c) { return "-" + c.toLowerCase(); }), v);
    });
  }

  function field(row) {
    var get = function (k) { var n = row.querySelector("[data-f='" + k + "']"); return n ? n : {}; };
    var type = get("type").value || "text";
    var name = get("name").value;
    var label = get("label").value || name;
    var wrap = el("label", "pv-field");
    if (type === "checkbox") {
      var cb = el("input"); cb.type = "checkbox";
      wrap.appendChild(cb);
      wrap.appendChild(document.createTextNode(" " + label));
      return wrap;
    }
    wrap.appendChild(el("span", "", label + (get("required").checked ? " *" : "")));
    var input;
    if (type === "textarea") {
      input = el("textarea");
    } else if (type === "select") {
      input = el("select");
      (get("options").value || "").split(",").forEach(function (o) {
        o = o.trim();
        if (o) input.appendChild(el("option", "", o));
      });
    } else {
      input = el("input"); input.type = type;
    }
    wrap.appendChild(input);
    return wrap;
  }

  function render() {
    var root = el("div", "pv");
    var items = editor.querySelectorAll("[data-item]");
    items.forEach(function (item) {
      var type = item.getAttribute("data-type");
      var node = null;
      if (type === "heading") {
        node = el("h2", "pv-heading", val(item, "content"));
      } else if (type === "text") {
        node = el("p", "pv-text", val(item, "content"));
      } else if (type === "image") {
        if (val(item, "url")) {
          node = el("img", "pv-image");
          node.src = safeURL(val(item, "url"));
          node.alt = val(item, "alt");
        }
      } else if (type === "button") {
        node = el("a", "pv-button", val(item, "label"));
        node.href = safeURL(val(item, "url"));
        node.rel = "noopener";
      } else if (type === "form") {
        node = el("fieldset", "pv-form");
        node.disabled = true;
        item.querySelectorAll("[data-field]").forEach(function (row) { node.appendChild(field(row)); });
        var submit = el("button", "pv-submit", val(item, "submitLabel") || "Submit");
        submit.type = "button";
        node.appendChild(submit);
      }
      if (node) {
        applyStyles(node, item);
        root.appendChild(node);
      }
    });
    if (!items.length) root.appendChild(el("p", "muted", "No items yet."));
    preview.replaceChildren(root);
  }

  editor.addEventListener("input", render);
  editor.addEventListener("change", render);
})();

// The campaign editor highlights what the chosen statistics engine means.
(function () {
  var pick = document.querySelector("select[name=statsEngine]");
  var help = document.getElementById("engine-help");
  if (!pick || !help) return;
  pick.addEventListener("change", function () {
    help.querySelectorAll("li").forEach(function (li, i) {
      li.classList.toggle("chosen", i === pick.selectedIndex);
    });
  });
})();
