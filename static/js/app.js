/* Exception Desk: small progressive enhancements. Every page works without this file. */
(function () {
  "use strict";

  var RENEW_INTERVAL_MS = 60 * 1000;

  function announce(message) {
    var region = document.getElementById("announcer");
    if (!region || !message) return;
    // Clear first so that the same message said twice is announced twice.
    region.textContent = "";
    window.setTimeout(function () {
      region.textContent = message;
    }, 100);
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (error) {
      return "";
    }
  }

  // Server-sent announcements: HX-Trigger: {"announce": {"message": "..."}}.
  document.addEventListener("announce", function (event) {
    announce(event.detail && event.detail.message);
  });

  // A refused HTMX request (403, 404, 500) is not swapped; say so instead of staying silent.
  // A failed background poll stays quiet (it is retried in 20 s); only user actions speak.
  // A poll has no triggering event; a click has one.
  document.addEventListener("htmx:responseError", function (event) {
    var detail = event.detail || {};
    var polled = !(detail.requestConfig && detail.requestConfig.triggeringEvent);
    // A failed background poll is not the user's action: stay quiet, the next poll retries.
    if (polled && detail.elt && detail.elt.hasAttribute("data-poll")) return;
    announce(document.body.dataset.errorMessage);
  });
  document.addEventListener("htmx:sendError", function () {
    announce(document.body.dataset.offlineMessage);
  });

  // Show only the detail fields of the chosen resolution. Without JavaScript every group
  // stays visible and the server reads only the chosen one. Disabled groups are neither
  // validated by the browser nor sent with the draft.
  function syncResolutionFields(form) {
    var chosen = form.querySelector('input[name="resolution"]:checked');
    var groups = form.querySelectorAll("[data-resolution-fields]");
    for (var i = 0; i < groups.length; i++) {
      var active = chosen && groups[i].getAttribute("data-resolution-fields") === chosen.value;
      groups[i].hidden = !active;
      groups[i].disabled = !active;
    }
  }

  function enhanceDecisionForm() {
    var form = document.getElementById("decide-form");
    if (!form || form.dataset.enhanced) return;
    form.dataset.enhanced = "1";
    syncResolutionFields(form);
    form.addEventListener("change", function (event) {
      if (event.target && event.target.name === "resolution") syncResolutionFields(form);
    });
  }

  // Lease renewal on the worker's real activity on the decision page: keyboard input,
  // typing or pointer presses, at most once a minute. Never on a timer, so an idle or
  // forgotten tab lets the lease lapse and the case returns to the queue.
  var lastRenewal = 0;
  var renewing = false;

  function renewOnActivity() {
    var panel = document.getElementById("lease-panel");
    if (!panel || !panel.dataset.renewUrl || renewing || document.hidden) return;
    var now = Date.now();
    if (now - lastRenewal < RENEW_INTERVAL_MS) return;
    lastRenewal = now;
    renewing = true;
    var body = new URLSearchParams();
    body.set("lease_token", panel.dataset.leaseToken || "");
    fetch(panel.dataset.renewUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "X-CSRFToken": csrfToken(),
        "HX-Request": "true",
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: body,
    })
      .then(function (response) {
        if (response.status === 409) {
          // The lease is gone; stop trying and tell the worker.
          delete panel.dataset.renewUrl;
        }
        if (response.ok || response.status === 409) {
          return response.text().then(function (html) {
            var current = document.getElementById("lease-expiry");
            if (current && html) current.outerHTML = html;
            if (response.status === 409) {
              var replaced = document.getElementById("lease-expiry");
              announce(replaced && replaced.textContent);
            }
          });
        }
      })
      .catch(function () {
        lastRenewal = 0; // try again on the next activity
      })
      .then(function () {
        renewing = false;
      });
  }

  // Where focus goes when a page loads. A full reload after the user's own action would
  // otherwise leave focus at the top of the document, and a keyboard user would have to
  // tab through the header again to find out what happened. In order: what the page marks
  // autofocus (an error summary, a conflict); the control a filter, sort or page link
  // asked for before the reload (data-focus-after-load); the messages that say what the
  // last action did. A link to a #fragment keeps the browser's own behaviour.
  var FOCUS_AFTER_LOAD = "exception-desk:focus-after-load";

  function rememberFocusAfterLoad(id, url) {
    try {
      var path = new URL(url, window.location.href).pathname;
      window.sessionStorage.setItem(FOCUS_AFTER_LOAD, JSON.stringify({ path: path, id: id }));
    } catch (error) {
      // No storage (private mode, disabled): the page loads with the browser's default focus.
    }
  }

  function takeFocusAfterLoad() {
    try {
      var stored = window.sessionStorage.getItem(FOCUS_AFTER_LOAD);
      window.sessionStorage.removeItem(FOCUS_AFTER_LOAD);
      var wanted = stored && JSON.parse(stored);
      // Only for the page that was asked for: a later, unrelated load keeps its own focus.
      if (wanted && wanted.path === window.location.pathname) {
        return document.getElementById(wanted.id);
      }
    } catch (error) {
      return null;
    }
    return null;
  }

  function focusOnLoad() {
    var requested = takeFocusAfterLoad();
    var target = document.querySelector("[autofocus]");
    if (!target && requested) target = requested;
    var messages = document.getElementById("messages");
    if (!target && messages && !window.location.hash) {
      target = messages;
      announce(messages.textContent.replace(/\s+/g, " ").trim());
    }
    if (target && document.activeElement !== target) target.focus();
  }

  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (form && form.dataset && form.dataset.focusAfterLoad) {
        rememberFocusAfterLoad(form.dataset.focusAfterLoad, form.action);
      }
    },
    true
  );
  // On a link, or on a container of links (the filter form, saved views, pagination).
  document.addEventListener("click", function (event) {
    var link = event.target && event.target.closest && event.target.closest("a[href]");
    var holder = link && link.closest("[data-focus-after-load]");
    if (holder) rememberFocusAfterLoad(holder.dataset.focusAfterLoad, link.href);
  });

  document.addEventListener("DOMContentLoaded", function () {
    enhanceDecisionForm();
    focusOnLoad();
    ["keydown", "input", "pointerdown"].forEach(function (name) {
      document.addEventListener(name, renewOnActivity, { passive: true, capture: true });
    });
  });

  // After a swap of the decision form (422 errors, 409 conflict, confirmation), enhance
  // the new form again; htmx itself moves focus to the element marked autofocus.
  document.addEventListener("htmx:afterSettle", enhanceDecisionForm);

  // htmx puts focus back on an element with the same id after a swap. When the swap took
  // that element away (a refresh removed the row whose link had focus), focus would fall
  // to <body> and a keyboard or screen reader user would be thrown to the top of the
  // page. Then focus goes to the swapped region's fallback (data-focus-fallback: the
  // queue's count), else to the region itself.
  var swappedRegionHadFocus = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail && event.detail.target;
    var active = document.activeElement;
    var inside = target && active && active !== document.body && target.contains(active);
    swappedRegionHadFocus = inside && target.id ? target.id : null;
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!swappedRegionHadFocus) return;
    var regionId = swappedRegionHadFocus;
    swappedRegionHadFocus = null;
    if (document.activeElement && document.activeElement !== document.body) return;
    var region = document.getElementById(regionId);
    if (!region) return;
    var fallback = region.querySelector("[data-focus-fallback]") || region;
    if (!fallback.hasAttribute("tabindex") && fallback.tabIndex < 0) {
      fallback.setAttribute("tabindex", "-1");
    }
    fallback.focus();
  });

  // The in-context confirmation of an irreversible resolution behaves like a dialog for
  // the keyboard: Escape, or its "No" link, removes it and returns focus to the control
  // that submitted the form (else to the chosen resolution). Nothing was recorded.
  var confirmReturnFocusId = "";
  document.addEventListener(
    "submit",
    function (event) {
      if (!event.target || event.target.id !== "decide-form") return;
      // Enter in a field submits too: then focus returns to that field.
      var active = document.activeElement;
      var origin = active && event.target.contains(active) ? active : event.submitter;
      confirmReturnFocusId = (origin && origin.id) || "";
    },
    true
  );

  function cancelConfirmation(panel) {
    var form = panel.closest("form");
    var message = panel.dataset.cancelledMessage;
    panel.parentNode.removeChild(panel);
    var target =
      (confirmReturnFocusId && document.getElementById(confirmReturnFocusId)) ||
      (form && form.querySelector('input[name="resolution"]:checked'));
    if (target) target.focus();
    announce(message);
  }

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !event.target || !event.target.closest) return;
    var panel = event.target.closest("#confirm-panel");
    if (!panel) return;
    event.preventDefault();
    cancelConfirmation(panel);
  });
  document.addEventListener("click", function (event) {
    var target = event.target;
    var link = target && target.closest && target.closest("[data-cancel-confirmation]");
    var panel = link && link.closest("#confirm-panel");
    if (!panel) return;
    event.preventDefault();
    cancelConfirmation(panel);
  });

  // What a focused region says: its title (aria-labelledby) and its messages (list items,
  // else the first paragraph), on one line.
  function regionSummary(region) {
    var parts = [];
    (region.getAttribute("aria-labelledby") || "").split(/\s+/).forEach(function (id) {
      var title = id && document.getElementById(id);
      if (title) parts.push(title.textContent);
    });
    var items = region.querySelectorAll("li");
    for (var i = 0; i < items.length; i++) parts.push(items[i].textContent);
    var paragraph = region.querySelector("p");
    if (!items.length && paragraph) parts.push(paragraph.textContent);
    return parts
      .map(function (part) {
        return part.replace(/\s+/g, " ").trim();
      })
      .filter(Boolean)
      .join(". ");
  }

  // A swap that put a labelled region in focus (the error summary after a 422, the
  // conflict panel after a 409, the confirmation of an irreversible resolution) is also
  // said in the live region: a focused generic region's name and text are not read out by
  // every screen reader. Once per response, though htmx settles each new element.
  var lastAnnouncedResponse = null;
  document.addEventListener("htmx:afterSettle", function (event) {
    var response = event.detail && event.detail.xhr;
    var region = document.activeElement;
    if (!response || response === lastAnnouncedResponse || !region) return;
    if (!region.hasAttribute("autofocus") || !region.hasAttribute("aria-labelledby")) return;
    if (!(event.target instanceof Node) || !event.target.contains(region)) return;
    lastAnnouncedResponse = response;
    announce(regionSummary(region));
  });
})();
