# PRISM_SANITIZE=ON builds everything with AddressSanitizer + UndefinedBehaviorSanitizer.
# UBSan findings abort (-fno-sanitize-recover) so a test run cannot pass over one.
set(PRISM_SANITIZE_FLAGS "")
if(PRISM_SANITIZE)
  set(PRISM_SANITIZE_FLAGS "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
