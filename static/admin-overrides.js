/* The Django admin's script-built widgets, given valid ARIA (loaded by
   templates/admin/base_site.html). The two-list selector (filter_horizontal) labels each
   filter box with a span carrying aria-label, which a span may not carry (axe
   aria-prohibited-attr): as role="img" the icon names the box, as Django meant.
   The selector is built on window load, after this file runs, and "Add another" builds
   more: watch the page for them. */
(function () {
  "use strict";

  function fix(root) {
    var icons = root.querySelectorAll(".search-label-icon[aria-label]:not([role])");
    for (var i = 0; i < icons.length; i++) icons[i].setAttribute("role", "img");
  }

  document.addEventListener("DOMContentLoaded", function () {
    fix(document);
    new MutationObserver(function () {
      fix(document);
    }).observe(document.body, { childList: true, subtree: true });
  });
})();
