# -*- Python -*-
"""lit's entry point for attn's tests, from either tree.

  lit build/test/Tools/messages.test   the build tree's lit.site.cfg.py sets
                                       the paths, then loads this file
  lit test/Tools/messages.test         the source tree: this file finds the
                                       build tree (build/ next to test/, or
                                       $ATTN_BUILD_DIR, or --param
                                       attn_build=DIR) and loads its
                                       lit.site.cfg.py, which comes back here

Test outputs go to the build tree either way. The configuration itself is
lit.attn.cfg.py."""

import os

here = os.path.dirname(os.path.abspath(__file__))
if hasattr(config, "attn_obj_root"):
    lit_config.load_config(config, os.path.join(here, "lit.attn.cfg.py"))
else:
    build = lit_config.params.get(
        "attn_build",
        os.environ.get("ATTN_BUILD_DIR", os.path.join(os.path.dirname(here),
                                                       "build")))
    site = os.path.join(build, "test", "lit.site.cfg.py")
    if not os.path.exists(site):
        lit_config.fatal(
            "no %s: build attn first (scripts/build), or name the build "
            "tree with ATTN_BUILD_DIR or --param attn_build=DIR" % site)
    lit_config.load_config(config, site)
